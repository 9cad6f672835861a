// Package otlp builds a server's tracer provider from the `telemetry`
// config section and the standard OTEL_* environment variables, exporting
// with OTLP over gRPC or HTTP. Off unless one of them turns it on.
package otlp

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/telemetry"
	"github.com/toolnexus/toolnexus/pkg/sources"
)

// DefaultServiceName is service.name when neither the config nor
// OTEL_SERVICE_NAME sets one.
const DefaultServiceName = "toolnexus"

// Setup builds the provider cfg and the environment ask for, or returns
// nil when tracing is off. getenv is os.LookupEnv outside tests. A problem
// with the section is a *config.Error naming the key.
func Setup(ctx context.Context, cfg config.Telemetry, getenv func(string) (string, bool), log *slog.Logger) (*telemetry.Provider, error) {
	if getenv == nil {
		getenv = os.LookupEnv
	}
	if log == nil {
		log = slog.Default()
	}
	on, why := enabled(cfg, getenv)
	if !on {
		return nil, nil
	}
	exp, err := exporter(ctx, cfg, getenv)
	if err != nil {
		return nil, err
	}
	name := cfg.ServiceName
	if name == "" {
		if v, ok := getenv("OTEL_SERVICE_NAME"); ok && v != "" {
			name = v
		} else {
			name = DefaultServiceName
		}
	}
	res, err := resource.New(ctx, resource.WithFromEnv(), resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", name)))
	if err != nil && res == nil {
		res = resource.NewSchemaless(attribute.String("service.name", name))
	}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithBatcher(exp), sdktrace.WithResource(res)}
	if cfg.SampleRatio != nil {
		opts = append(opts, sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(*cfg.SampleRatio))))
	}
	// Without WithSampler the SDK reads OTEL_TRACES_SAMPLER(_ARG); its
	// default is parentbased_always_on.
	log.Info("tracing on", "why", why, "protocol", protocol(cfg, getenv), "service", name)
	return telemetry.NewProvider(sdktrace.NewTracerProvider(opts...)), nil
}

// enabled decides whether tracing is on and says why (for the log).
func enabled(cfg config.Telemetry, getenv func(string) (string, bool)) (bool, string) {
	if cfg.Enabled != nil {
		if *cfg.Enabled {
			return true, "telemetry.enabled"
		}
		return false, ""
	}
	if v, _ := getenv("OTEL_SDK_DISABLED"); strings.EqualFold(strings.TrimSpace(v), "true") {
		return false, ""
	}
	switch v, _ := getenv("OTEL_TRACES_EXPORTER"); strings.ToLower(strings.TrimSpace(v)) {
	case "none":
		return false, ""
	case "otlp":
		return true, "OTEL_TRACES_EXPORTER=otlp"
	}
	if cfg.Endpoint != "" {
		return true, "telemetry.endpoint"
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"} {
		if v, ok := getenv(k); ok && v != "" {
			return true, k
		}
	}
	return false, ""
}

// protocol is the OTLP protocol: the config's, else the environment's,
// else http/protobuf (the OpenTelemetry default).
func protocol(cfg config.Telemetry, getenv func(string) (string, bool)) string {
	if cfg.Protocol != "" {
		return cfg.Protocol
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if v, ok := getenv(k); ok && v != "" {
			return strings.TrimSpace(v)
		}
	}
	return "http/protobuf"
}

// exporter makes the OTLP exporter. What the config leaves out, the
// exporter itself reads from OTEL_EXPORTER_OTLP_* (endpoint, headers,
// certificates, timeout, compression).
func exporter(ctx context.Context, cfg config.Telemetry, getenv func(string) (string, bool)) (sdktrace.SpanExporter, error) {
	headers, err := sources.ExpandHeaders(cfg.Headers)
	if err != nil {
		return nil, &config.Error{Key: "telemetry.headers", Msg: err.Error()}
	}
	var u *url.URL
	if cfg.Endpoint != "" {
		u, _ = url.Parse(cfg.Endpoint) // validated by the config
	}
	insecure := cfg.Insecure != nil && *cfg.Insecure
	switch p := protocol(cfg, getenv); p {
	case "grpc":
		var opts []otlptracegrpc.Option
		if u != nil {
			opts = append(opts, otlptracegrpc.WithEndpoint(u.Host))
			if u.Scheme == "http" {
				insecure = true
			}
		}
		if insecure {
			opts = append(opts, otlptracegrpc.WithInsecure())
		}
		if len(headers) > 0 {
			opts = append(opts, otlptracegrpc.WithHeaders(headers))
		}
		return otlptracegrpc.New(ctx, opts...)
	case "http/protobuf":
		var opts []otlptracehttp.Option
		if u != nil {
			opts = append(opts, otlptracehttp.WithEndpoint(u.Host),
				otlptracehttp.WithURLPath(strings.TrimSuffix(u.Path, "/")+"/v1/traces"))
			if u.Scheme == "http" {
				insecure = true
			}
		}
		if insecure {
			opts = append(opts, otlptracehttp.WithInsecure())
		}
		if len(headers) > 0 {
			opts = append(opts, otlptracehttp.WithHeaders(headers))
		}
		return otlptracehttp.New(ctx, opts...)
	default:
		key := "telemetry.protocol"
		if cfg.Protocol == "" {
			key = "OTEL_EXPORTER_OTLP_PROTOCOL"
		}
		return nil, &config.Error{Key: key, Msg: fmt.Sprintf("%q is not supported; use grpc or http/protobuf", p)}
	}
}
