package executor

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
)

// EnableExemplars makes every duration observation of a sampled, traced
// call carry its trace id as an exemplar (trace_id), which Prometheus
// keeps when it scrapes OpenMetrics, and Grafana links to the trace. Call
// it before the first Execute.
func (x *Executor) EnableExemplars() { x.exemplars = true }

// observeTraced observes v with the trace id of ctx's span as exemplar
// when that span is sampled (an unsampled trace would be a dead link).
func observeTraced(ctx context.Context, o prometheus.Observer, v float64) {
	sc := trace.SpanContextFromContext(ctx)
	if eo, ok := o.(prometheus.ExemplarObserver); ok && sc.IsSampled() {
		eo.ObserveWithExemplar(v, prometheus.Labels{"trace_id": sc.TraceID().String()})
		return
	}
	o.Observe(v)
}
