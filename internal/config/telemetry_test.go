package config_test

import (
	"path/filepath"
	"testing"
)

func TestTelemetryAndAuditSections(t *testing.T) {
	cfg, err := parse(t, `{"telemetry": {"enabled": true, "endpoint": "http://collector:4317", "protocol": "grpc",
		"headers": {"Authorization": "Bearer ${OTLP_TOKEN}"}, "sampleRatio": 0.25, "serviceName": "tn"},
		"audit": {"path": "audit.log", "arguments": true}}`)
	if err != nil {
		t.Fatal(err)
	}
	tel := cfg.Telemetry
	if tel.Enabled == nil || !*tel.Enabled || tel.Endpoint != "http://collector:4317" || tel.Protocol != "grpc" ||
		tel.SampleRatio == nil || *tel.SampleRatio != 0.25 || tel.ServiceName != "tn" || tel.Headers["Authorization"] != "Bearer ${OTLP_TOKEN}" {
		t.Errorf("telemetry = %+v", tel)
	}
	if a := cfg.Audit; !a.Enabled || !a.Arguments || cfg.AuditPath() != filepath.Join(cfg.BaseDir, "audit.log") {
		t.Errorf("audit = %+v, path %s", a, cfg.AuditPath())
	}

	// Absent: tracing left to the environment, no audit log.
	cfg, err = parse(t, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Telemetry.Enabled != nil || cfg.Audit.Enabled {
		t.Errorf("defaults: telemetry %+v audit %+v", cfg.Telemetry, cfg.Audit)
	}
	// An empty audit section logs to stderr; enabled:false turns it off.
	if cfg, _ = parse(t, `{"audit": {}}`); !cfg.Audit.Enabled || cfg.AuditPath() != "" {
		t.Errorf("audit {} = %+v", cfg.Audit)
	}
	if cfg, _ = parse(t, `{"audit": {"enabled": false, "path": "x"}}`); cfg.Audit.Enabled {
		t.Errorf("audit enabled:false = %+v", cfg.Audit)
	}
}

func TestTelemetryAndAuditErrorsNameTheKey(t *testing.T) {
	for text, key := range map[string]string{
		`{"telemetry": {"endpoint": "collector:4317"}}`:       "telemetry.endpoint",
		`{"telemetry": {"protocol": "http/json"}}`:            "telemetry.protocol",
		`{"telemetry": {"sampleRatio": 2}}`:                   "telemetry.sampleRatio",
		`{"telemetry": {"enabled": "yes"}}`:                   "telemetry.enabled",
		`{"telemetry": {"endpont": "http://x"}}`:              "telemetry.endpont",
		`{"telemetry": {"headers": {"bad name": "v"}}}`:       "telemetry.headers.bad name",
		`{"audit": {"path": 3}}`:                              "audit.path",
		`{"audit": {"argument": true}}`:                       "audit.argument",
		`{"audit": {"enabled": true, "arguments": "please"}}`: "audit.arguments",
	} {
		if ce := mustFail(t, text); ce.Key != key {
			t.Errorf("%s: key %q (%s), want %q", text, ce.Key, ce.Msg, key)
		}
	}
}
