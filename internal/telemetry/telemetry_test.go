package telemetry_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/toolnexus/toolnexus/internal/telemetry"
)

// Start follows the span in the context: a child on that span's provider,
// or nothing at all without one.
func TestStartFollowsTheCallsSpan(t *testing.T) {
	ctx, span := telemetry.Start(context.Background(), "sandbox.setup")
	if span.IsRecording() || span.SpanContext().IsValid() || telemetry.Traced(ctx) {
		t.Fatal("a span without a traced parent")
	}
	span.End()

	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	ctx, parent := tp.Tracer("test").Start(context.Background(), "execute_tool bash")
	_, child := telemetry.Start(ctx, "sandbox.setup")
	child.End()
	parent.End()
	spans := exp.GetSpans()
	if len(spans) != 2 || spans[0].Name != "sandbox.setup" || spans[0].Parent.SpanID() != parent.SpanContext().SpanID() {
		t.Fatalf("spans %v", spans.Snapshots())
	}
}

// Transport adds traceparent (and a client span) only inside a trace.
func TestTransportPropagatesOnlyTracedRequests(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("traceparent"))
	}))
	defer srv.Close()
	hc := &http.Client{Transport: telemetry.Transport(http.DefaultTransport)}

	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	ctx, span := tp.Tracer("test").Start(context.Background(), "execute_tool get")
	for _, c := range []context.Context{context.Background(), ctx} {
		req, _ := http.NewRequestWithContext(c, http.MethodGet, srv.URL, nil)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	span.End()
	if len(got) != 2 || got[0] != "" || got[1] == "" {
		t.Fatalf("traceparent headers %q: want none untraced, one traced", got)
	}
	spans := exp.GetSpans()
	if len(spans) != 2 || spans[0].Name != "HTTP GET" || spans[0].Parent.SpanID() != span.SpanContext().SpanID() {
		t.Fatalf("spans %v", spans.Snapshots())
	}
	if want := "00-" + span.SpanContext().TraceID().String() + "-" + spans[0].SpanContext.SpanID().String() + "-01"; got[1] != want {
		t.Errorf("traceparent %s, want %s (the client span)", got[1], want)
	}
}
