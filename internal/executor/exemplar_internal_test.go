package executor

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// testBuckets are bounds like the server's: the executor takes them from
// its Meter, and this test, inside the package, cannot import the metrics
// package (which imports the executor).
var testBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1}

// exemplarHistogram is a Prometheus histogram as a TraceObserver, as
// internal/metrics adapts it.
type exemplarHistogram struct{ prometheus.Histogram }

func (h exemplarHistogram) ObserveWithTraceID(v float64, id string) {
	h.Histogram.(prometheus.ExemplarObserver).ObserveWithExemplar(v, prometheus.Labels{"trace_id": id})
}

func sampledContext(traceByte byte) context.Context {
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{traceByte, 1}, SpanID: trace.SpanID{1}, TraceFlags: trace.FlagsSampled,
	})
	return trace.ContextWithSpanContext(context.Background(), sc)
}

func bucketExemplars(t *testing.T, h prometheus.Histogram) map[float64]string {
	t.Helper()
	var m dto.Metric
	if err := h.Write(&m); err != nil {
		t.Fatal(err)
	}
	out := map[float64]string{}
	for _, b := range m.GetHistogram().GetBucket() {
		if e := b.GetExemplar(); e != nil {
			out[b.GetUpperBound()] = e.GetLabel()[0].GetValue()
		}
	}
	return out
}

// Each bucket takes the first sampled call's trace as its exemplar, then at
// most one more per exemplarEvery; unsampled calls never leave one. The
// clock is passed in, so nothing here depends on how fast the test runs.
func TestExemplarsPacedPerBucket(t *testing.T) {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "d", Buckets: testBuckets})
	o := exemplarHistogram{h}
	clock := newExemplarClock(testBuckets)
	t0 := time.Unix(1000, 0)
	first, second, third := sampledContext(1), sampledContext(2), sampledContext(3)

	observeTraced(context.Background(), o, testBuckets, clock, .0006, t0) // not traced
	observeTraced(first, o, testBuckets, clock, .0006, t0)
	observeTraced(second, o, testBuckets, clock, .0008, t0.Add(time.Second/2)) // same bucket, too soon
	observeTraced(second, o, testBuckets, clock, .04, t0.Add(time.Second/2))   // another bucket: its first
	got := bucketExemplars(t, h)
	if got[.001] != (trace.TraceID{1, 1}).String() || got[.05] != (trace.TraceID{2, 1}).String() || len(got) != 2 {
		t.Fatalf("exemplars %v", got)
	}
	observeTraced(third, o, testBuckets, clock, .0006, t0.Add(time.Second))
	if got := bucketExemplars(t, h); got[.001] != (trace.TraceID{3, 1}).String() {
		t.Fatalf("after a second the bucket takes a new exemplar: %v", got)
	}
}

// A tool's span attributes are made once per protocol and outcome and
// shared by every call that ends the same way.
func TestToolSpanAttributesShared(t *testing.T) {
	s := &ToolSpan{Name: SpanName("t"), Source: "debug", tool: "t"}
	a, b := s.Attributes(ProtocolGRPC, tool.OutcomeOK), s.Attributes(ProtocolGRPC, tool.OutcomeOK)
	if &a[0] != &b[0] {
		t.Fatal("two calls built two attribute slices")
	}
	want := map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t", "toolnexus.source": "debug",
		"toolnexus.protocol": "mcp", "toolnexus.outcome": "timeout"}
	got := map[string]string{}
	for _, kv := range s.Attributes(ProtocolMCP, tool.OutcomeTimeout) {
		got[string(kv.Key)] = kv.Value.AsString()
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if testing.AllocsPerRun(100, func() { _ = s.Attributes(ProtocolGRPC, tool.OutcomeOK) }) != 0 {
		t.Error("Attributes allocates once prepared")
	}
}
