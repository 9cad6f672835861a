package executor

import "github.com/toolnexus/toolnexus/pkg/tool"

// UnknownLabel stands in for source and tool of calls to names no tool has,
// so a flood of junk names cannot blow up cardinality.
const UnknownLabel = "unknown"

// Meter is where the executor records its per-source series. The executor
// asks for every handle when it builds its table, off the call path, and
// on the call path only increments and observes them. It is an interface
// so that the call path does not depend on a metrics library (Prometheus'
// client brings protobuf with it); internal/metrics provides the one the
// server uses (Metrics.ForExecutor).
type Meter interface {
	// Calls is the calls_total child for one tool, outcome and protocol.
	Calls(source, tool, outcome, protocol string) Counter
	// InFlight and Duration are a source's gauge and histogram child.
	InFlight(source, protocol string) Gauge
	Duration(source, protocol string) Observer
	// Refusals are a source's sandbox refusal counters.
	Refusals(source string) RefusalCounter
	// DurationBuckets are the histogram's upper bounds, which pace the
	// exemplars per bucket.
	DurationBuckets() []float64
}

// Counter, Gauge and Observer are the handles a Meter hands out.
type (
	Counter interface{ Inc() }
	Gauge   interface {
		Inc()
		Dec()
	}
	Observer interface{ Observe(float64) }
)

// TraceObserver is an Observer that can keep a trace id as the exemplar of
// the observation's bucket.
type TraceObserver interface {
	ObserveWithTraceID(v float64, traceID string)
}

// RefusalCounter counts the calls a sandbox guard or limit refused.
type RefusalCounter interface{ Inc(tool.Refusal) }
