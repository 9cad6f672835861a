package telemetry

import (
	"context"
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Start starts a child span of the span in ctx, on that span's own
// provider: code that runs inside a tool call (a source, the sandbox
// helper) gets spans in the call's trace without being handed a provider,
// and gets a no-op span — at the cost of one context lookup — when the
// call is not traced. End the span when the work is done:
//
//	ctx, span := telemetry.Start(ctx, "sandbox.setup")
//	defer span.End()
func Start(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	parent := trace.SpanFromContext(ctx)
	if !parent.SpanContext().IsValid() {
		return ctx, parent // the no-op span: nothing is recorded
	}
	return parent.TracerProvider().Tracer(ScopeName).Start(ctx, name, trace.WithAttributes(attrs...))
}

// Fail marks span as failed with err (no-op for a nil err).
func Fail(span trace.Span, err error) {
	if err == nil {
		return
	}
	span.RecordError(err)
	span.SetStatus(codes.Error, err.Error())
}

// Traced reports whether ctx carries a trace to propagate.
func Traced(ctx context.Context) bool { return trace.SpanContextFromContext(ctx).IsValid() }

// InjectMeta adds traceparent (and tracestate, baggage when present) to an
// MCP _meta map, creating it when nil, and returns it; a ctx without a
// trace leaves meta as it is.
func InjectMeta(ctx context.Context, meta map[string]any) map[string]any {
	if !Traced(ctx) {
		return meta
	}
	c := propagation.MapCarrier{}
	Propagator.Inject(ctx, c)
	if meta == nil {
		meta = make(map[string]any, len(c))
	}
	for k, v := range c {
		meta[k] = v
	}
	return meta
}

// ExtractMeta continues the trace of an MCP request's _meta
// (traceparent, tracestate), when it carries one.
func ExtractMeta(ctx context.Context, meta map[string]any) context.Context {
	tp, _ := meta["traceparent"].(string)
	if tp == "" {
		return ctx
	}
	c := propagation.MapCarrier{"traceparent": tp}
	if ts, _ := meta["tracestate"].(string); ts != "" {
		c["tracestate"] = ts
	}
	if b, _ := meta["baggage"].(string); b != "" {
		c["baggage"] = b
	}
	return Propagator.Extract(ctx, c)
}

// ExtractHeader continues the trace of an HTTP request's traceparent
// header, when it carries one.
func ExtractHeader(ctx context.Context, h http.Header) context.Context {
	if h.Get("traceparent") == "" {
		return ctx
	}
	return Propagator.Extract(ctx, propagation.HeaderCarrier(h))
}

// InjectHeader adds traceparent (and tracestate, baggage) to h when ctx
// carries a trace.
func InjectHeader(ctx context.Context, h http.Header) {
	if Traced(ctx) {
		Propagator.Inject(ctx, propagation.HeaderCarrier(h))
	}
}

// Transport wraps an outgoing HTTP client's transport: a request made
// inside a traced call gets a client span (otelhttp) and the W3C
// traceparent header; any other request goes straight to base.
func Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{base: base, traced: otelhttp.NewTransport(base,
		otelhttp.WithPropagators(Propagator),
		otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()))}
}

type transport struct {
	base   http.RoundTripper
	traced http.RoundTripper
}

func (t *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	if Traced(r.Context()) {
		return t.traced.RoundTrip(r)
	}
	return t.base.RoundTrip(r)
}

// CloseIdleConnections passes through to the base transport, so the
// owner's http.Client.CloseIdleConnections keeps working.
func (t *transport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
