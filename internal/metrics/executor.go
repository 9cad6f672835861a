package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolnexus/toolnexus/internal/executor"
)

// ForExecutor is m as the executor's Meter: the executor names the handles
// it needs and this hands it the Prometheus children, so the call path
// itself does not depend on the Prometheus client.
func (m *Metrics) ForExecutor() executor.Meter { return executorMeter{m} }

type executorMeter struct{ m *Metrics }

func (e executorMeter) Calls(source, tool, outcome, protocol string) executor.Counter {
	return e.m.Calls.WithLabelValues(source, tool, outcome, protocol)
}

func (e executorMeter) InFlight(source, protocol string) executor.Gauge {
	return e.m.InFlight.WithLabelValues(source, protocol)
}

func (e executorMeter) Duration(source, protocol string) executor.Observer {
	return exemplarObserver{e.m.Duration.WithLabelValues(source, protocol)}
}

func (e executorMeter) Refusals(source string) executor.RefusalCounter {
	return e.m.RefusalCounters(source)
}

func (executorMeter) DurationBuckets() []float64 { return DurationBuckets }

// exemplarObserver is a histogram child that keeps a trace id as its
// bucket's exemplar (label trace_id) when asked to.
type exemplarObserver struct{ prometheus.Observer }

func (o exemplarObserver) ObserveWithTraceID(v float64, traceID string) {
	if eo, ok := o.Observer.(prometheus.ExemplarObserver); ok {
		eo.ObserveWithExemplar(v, prometheus.Labels{"trace_id": traceID})
		return
	}
	o.Observe(v)
}
