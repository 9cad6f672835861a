package executor

import (
	"context"
	"sort"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// EnableExemplars makes duration observations of sampled, traced calls
// carry their trace id as an exemplar (trace_id), which Prometheus keeps
// when it scrapes OpenMetrics, and Grafana links to the trace. Call it
// before the first Execute.
func (x *Executor) EnableExemplars() {
	x.mu.Lock()
	x.exemplars = true
	x.mu.Unlock()
	x.Rebuild()
}

// exemplarEvery is how often one bucket of one source's histogram takes a
// new exemplar. A histogram keeps only the last exemplar of each bucket
// and a scrape reads it every 15 s or more, so attaching one to every
// call (a label map, the trace id's hex string and the exemplar itself:
// seven allocations) would be thrown away all but once per scrape.
const exemplarEvery = int64(time.Second)

// exemplarClock is, per bucket of one histogram (the last slot is +Inf),
// when it last took an exemplar (unix nanoseconds).
type exemplarClock []atomic.Int64

func newExemplarClock(buckets []float64) exemplarClock { return make(exemplarClock, len(buckets)+1) }

// observeTraced observes v; when ctx's span is sampled (an unsampled trace
// would be a dead link) and v's bucket has had no exemplar for
// exemplarEvery, the trace id goes with it as the bucket's exemplar. The
// first call into each bucket always leaves one.
func observeTraced(ctx context.Context, o Observer, buckets []float64, clock exemplarClock, v float64, now time.Time) {
	sc := trace.SpanContextFromContext(ctx)
	if sc.IsSampled() && len(clock) > 0 {
		slot := &clock[sort.SearchFloat64s(buckets, v)]
		t, last := now.UnixNano(), slot.Load()
		if t-last >= exemplarEvery && slot.CompareAndSwap(last, t) {
			if eo, ok := o.(TraceObserver); ok {
				eo.ObserveWithTraceID(v, sc.TraceID().String())
				return
			}
		}
	}
	o.Observe(v)
}
