// Package telemetry is toolnexus's OpenTelemetry tracing: the provider a
// server runs (built by internal/telemetry/otlp from the `telemetry` config
// section and the standard OTEL_* environment variables), the W3C
// propagator every front-end and source uses, and small helpers for
// starting spans and carrying trace context on outgoing requests.
//
// Tracing is off unless the config or the environment turns it on; off,
// the provider is nil and nothing on the call path starts a span or
// touches a header. Everything here is per server, never the OTel global
// provider, so an embedding program's own tracing is left alone.
package telemetry

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of every span toolnexus starts.
const ScopeName = "github.com/toolnexus/toolnexus"

// Propagator carries trace context in and out: W3C traceparent and
// tracestate, and W3C baggage.
var Propagator propagation.TextMapPropagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// Provider is a running tracer provider. A nil *Provider is tracing off:
// every method works on it and does nothing.
type Provider struct {
	sdk *sdktrace.TracerProvider
}

// NewProvider wraps an SDK tracer provider (internal/telemetry/otlp
// builds the one a server runs).
func NewProvider(tp *sdktrace.TracerProvider) *Provider { return &Provider{sdk: tp} }

// TracerProvider is the provider for instrumentation options (otelgrpc,
// otelhttp); nil when tracing is off.
func (p *Provider) TracerProvider() trace.TracerProvider {
	if p == nil {
		return nil
	}
	return p.sdk
}

// Tracer is toolnexus's tracer; nil when tracing is off.
func (p *Provider) Tracer() trace.Tracer {
	if p == nil {
		return nil
	}
	return p.sdk.Tracer(ScopeName)
}

// Shutdown exports the spans still buffered and stops the exporter,
// within ctx.
func (p *Provider) Shutdown(ctx context.Context) error {
	if p == nil {
		return nil
	}
	return p.sdk.Shutdown(ctx)
}

// ForceFlush exports the spans buffered so far.
func (p *Provider) ForceFlush(ctx context.Context) error {
	if p == nil {
		return nil
	}
	return p.sdk.ForceFlush(ctx)
}

// ShutdownTimeout bounds the final export on server close.
const ShutdownTimeout = 5 * time.Second
