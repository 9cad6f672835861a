package otlp

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/toolnexus/toolnexus/internal/config"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestOnlyTheConfigOrTheEnvironmentTurnsTracingOn(t *testing.T) {
	yes, no := true, false
	for _, c := range []struct {
		name string
		cfg  config.Telemetry
		env  map[string]string
		on   bool
	}{
		{"nothing", config.Telemetry{}, nil, false},
		{"endpoint env", config.Telemetry{}, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, true},
		{"traces endpoint env", config.Telemetry{}, map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, true},
		{"exporter otlp", config.Telemetry{}, map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true},
		{"exporter none wins", config.Telemetry{}, map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c"}, false},
		{"sdk disabled", config.Telemetry{}, map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c"}, false},
		{"config endpoint", config.Telemetry{Endpoint: "http://c:4317"}, nil, true},
		{"config enabled", config.Telemetry{Enabled: &yes}, nil, true},
		{"config disabled wins", config.Telemetry{Enabled: &no}, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c"}, false},
	} {
		if on, _ := enabled(c.cfg, env(c.env)); on != c.on {
			t.Errorf("%s: on = %v, want %v", c.name, on, c.on)
		}
	}
}

func TestSetupBuildsBothProtocolsAndRefusesOthers(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	for _, proto := range []string{"grpc", "http/protobuf"} {
		p, err := Setup(context.Background(), config.Telemetry{Endpoint: "http://127.0.0.1:1", Protocol: proto}, env(nil), log)
		if err != nil || p == nil || p.Tracer() == nil {
			t.Fatalf("%s: %v %v", proto, p, err)
		}
		if err := p.Shutdown(context.Background()); err != nil {
			t.Errorf("%s: shutdown with nothing to export: %v", proto, err)
		}
	}
	p, err := Setup(context.Background(), config.Telemetry{}, env(nil), log)
	if p != nil || err != nil {
		t.Fatalf("off: %v %v", p, err)
	}
	_, err = Setup(context.Background(), config.Telemetry{}, env(map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}), log)
	var ce *config.Error
	if !errors.As(err, &ce) || ce.Key != "OTEL_EXPORTER_OTLP_PROTOCOL" {
		t.Fatalf("http/json: %v, want a config error naming OTEL_EXPORTER_OTLP_PROTOCOL", err)
	}
	_, err = Setup(context.Background(), config.Telemetry{Endpoint: "http://c:4317", Headers: map[string]string{"Authorization": "${TN_NO_SUCH_VAR}"}}, env(nil), log)
	if !errors.As(err, &ce) || ce.Key != "telemetry.headers" {
		t.Fatalf("unset header variable: %v", err)
	}
}
