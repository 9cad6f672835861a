package mcp_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"syscall"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources/mcp"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// A call made inside a traced span hands the server the trace in
// params._meta (traceparent and tracestate) on stdio and streamable HTTP,
// and over HTTP as the traceparent header too. An untraced call sends none.
func TestTraceContextReachesTheServer(t *testing.T) {
	transports(t, func(t *testing.T, cfg mcp.ServerConfig, _ []string) {
		reg, _ := start(t, "tr", cfg)
		tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
		sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
		ts, _ := trace.ParseTraceState("vendor=opaque")
		ctx := trace.ContextWithSpanContext(context.Background(), trace.NewSpanContext(trace.SpanContextConfig{
			TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, TraceState: ts}))

		res := testutil.Direct{Reg: reg}.Execute(ctx, "tr_meta", tool.Call{Arguments: json.RawMessage(`{}`)})
		if res.IsError {
			t.Fatalf("meta: %+v", res)
		}
		parts := strings.SplitN(res.Output, "\n", 2)
		var meta map[string]any
		if err := json.Unmarshal([]byte(parts[0]), &meta); err != nil {
			t.Fatalf("meta %q: %v", parts[0], err)
		}
		want := "00-" + tid.String() + "-" + sid.String() + "-01"
		if meta["traceparent"] != want || meta["tracestate"] != "vendor=opaque" {
			t.Errorf("_meta = %v, want traceparent %s and tracestate vendor=opaque", meta, want)
		}
		header := ""
		if len(parts) == 2 {
			header = parts[1]
		}
		if cfg.Type == mcp.TypeRemote && header != want {
			t.Errorf("traceparent header %q, want %s", header, want)
		}

		res = call(t, reg, "tr_meta", `{}`)
		if strings.Contains(res.Output, "traceparent") || strings.Contains(res.Output, "00-") {
			t.Errorf("an untraced call sent trace context: %q", res.Output)
		}
	})
}

// A restart after the server died is one span, mcp.reconnect, with the
// server, the attempt and how many tools came back.
func TestReconnectIsASpan(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	env := testEnv
	env.Tracing = tp
	reg := registry.New()
	src := mcp.New("k", localConfig(), env)
	defer src.Close(context.Background())
	if err := src.Start(context.Background(), reg); err != nil {
		t.Fatal(err)
	}
	w, _ := reg.Watch()
	defer w.Close()
	pid, err := strconv.Atoi(call(t, reg, "k_pid", `{}`).Output)
	if err != nil {
		t.Fatal(err)
	}
	rev := reg.Snapshot().Revision()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The span ends before the restarted server's tools are published.
	waitFor(t, w, "the restart's publish", func(s *registry.Snapshot) bool { return s.Revision() > rev })
	spans := exp.GetSpans()
	if len(spans) != 1 || spans[0].Name != "mcp.reconnect" {
		t.Fatalf("spans %v, want one mcp.reconnect", spans.Snapshots())
	}
	attrs := map[string]string{}
	for _, kv := range spans[0].Attributes {
		attrs[string(kv.Key)] = kv.Value.String()
	}
	if attrs["toolnexus.mcp.server"] != "k" || attrs["toolnexus.mcp.attempt"] != "1" || attrs["toolnexus.mcp.tools"] != strconv.Itoa(len(coreTools)+1) {
		t.Errorf("attributes %v", attrs)
	}
	if spans[0].Parent.IsValid() {
		t.Errorf("a reconnect is a root span; parent %v", spans[0].Parent)
	}
}
