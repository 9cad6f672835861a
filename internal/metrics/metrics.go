// Package metrics defines the toolnexus_* Prometheus series. Names and
// labels are part of the public contract (README "Metrics"): dashboards and alerts
// are built on them.
package metrics

import (
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolnexus/toolnexus/internal/executor"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// UnknownLabel stands in for source and tool of calls to names no tool has,
// so a flood of junk names cannot blow up cardinality.
const UnknownLabel = executor.UnknownLabel

// DurationBuckets are the upper bounds of toolnexus_tool_call_duration_seconds.
var DurationBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300}

// Metrics holds the per-source call series.
type Metrics struct {
	Calls    *prometheus.CounterVec   // source, tool, outcome, protocol
	Duration *prometheus.HistogramVec // source, protocol
	InFlight *prometheus.GaugeVec     // source, protocol
	Reloads  *prometheus.CounterVec   // result
	Refusals *prometheus.CounterVec   // source, reason

	// refusals holds each source's refusal counters, made before any
	// call needs them (RefusalCounters): read without a lock.
	refusals   atomic.Pointer[map[string]*RefusalCounters]
	refusalsMu sync.Mutex // serialises adding a source
}

// RefusalCounters are one source's toolnexus_sandbox_refusals_total
// children, indexed by tool.Refusal (index 0, no refusal, is unused).
type RefusalCounters [tool.NumRefusals]prometheus.Counter

// Inc counts one refusal r (no-op for tool.RefusalNone or an unknown r).
func (c *RefusalCounters) Inc(r tool.Refusal) {
	if r != tool.RefusalNone && int(r) < len(c) {
		c[r].Inc()
	}
}

// New creates the series and registers them with reg.
func New(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolnexus_tool_calls_total",
			Help: "Tool calls by source, tool and outcome (ok, tool_error, unknown_tool, panic, timeout, canceled, invalid_arguments, denied, pending) and protocol (grpc, mcp).",
		}, []string{"source", "tool", "outcome", "protocol"}),
		Duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "toolnexus_tool_call_duration_seconds",
			Help:    "Tool call latency by source (no per-tool histogram, to bound cardinality).",
			Buckets: DurationBuckets,
		}, []string{"source", "protocol"}),
		InFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "toolnexus_tool_calls_in_flight",
			Help: "Tool calls running now, by source.",
		}, []string{"source", "protocol"}),
		Reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolnexus_reloads_total",
			Help: "Config reloads by result (ok, error).",
		}, []string{"result"}),
	}
	m.Refusals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "toolnexus_sandbox_refusals_total",
		Help: "Calls a sandbox guard or limit refused, by the tool's source and reason (path_escape, network_address, session_quota, session_limit, cpu_limit, file_size_limit).",
	}, []string{"source", "reason"})
	reg.MustRegister(m.Calls, m.Duration, m.InFlight, m.Reloads, m.Refusals)
	m.initialize()
	return m
}

// Protocols are the values of the protocol label.
var Protocols = []string{"grpc", "mcp"}

// initialize creates, at 0, every series whose label values are known
// before the first call, so a dashboard shows 0 rather than "No data" on a
// fresh server: both reload results, and calls_total for every outcome and
// protocol under source="unknown", tool="unknown" (a bounded set; a real
// tool's series appear with its first call, since tools × outcomes would
// not be bounded). The per-source histogram and in-flight gauge are made
// for every source when the executor builds its table.
func (m *Metrics) initialize() {
	empty := map[string]*RefusalCounters{}
	m.refusals.Store(&empty)
	m.Reloads.WithLabelValues("ok")
	m.Reloads.WithLabelValues("error")
	for o := tool.OutcomeOK; o <= tool.OutcomePending; o++ {
		for _, p := range Protocols {
			m.Calls.WithLabelValues(UnknownLabel, UnknownLabel, o.String(), p)
		}
	}
}

// InitRefusals creates, at 0, every reason's refusal series for each of
// sources (the shipped source kinds), so a dashboard shows 0 rather than
// "No data" before the first refusal.
func (m *Metrics) InitRefusals(sources []string) {
	for _, s := range sources {
		m.RefusalCounters(s)
	}
}

// RefusalCounters returns source's refusal counters, creating them (every
// reason at 0) on first use. A call that already has its source's counters
// — the executor fetches them when it builds its table — counts without a
// lock; only the first request for a source takes one.
func (m *Metrics) RefusalCounters(source string) *RefusalCounters {
	if c := (*m.refusals.Load())[source]; c != nil {
		return c
	}
	m.refusalsMu.Lock()
	defer m.refusalsMu.Unlock()
	old := *m.refusals.Load()
	if c := old[source]; c != nil {
		return c
	}
	c := new(RefusalCounters)
	for _, r := range tool.Refusals() {
		c[r] = m.Refusals.WithLabelValues(source, r.String())
	}
	next := make(map[string]*RefusalCounters, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	next[source] = c
	m.refusals.Store(&next)
	return c
}

// SourceState is one source instance as the state collector sees it.
type SourceState struct {
	Kind, Name string
	Up         bool
}

// StateFunc reports the live state at scrape time: tools per source label,
// each source instance, and the registry revision.
type StateFunc func() (toolsBySource map[string]int, instances []SourceState, revision uint64)

// stateCollector computes the registry and source gauges at scrape time, so
// nothing on the Execute path or in the sources has to keep them current.
type stateCollector struct {
	fn       StateFunc
	tools    *prometheus.Desc
	up       *prometheus.Desc
	revision *prometheus.Desc
}

// RegisterState registers toolnexus_tools, toolnexus_source_up and
// toolnexus_registry_revision, computed by fn at every scrape.
func RegisterState(reg prometheus.Registerer, fn StateFunc) {
	reg.MustRegister(&stateCollector{
		fn:       fn,
		tools:    prometheus.NewDesc("toolnexus_tools", "Tools currently registered (visible), by source label.", []string{"source"}, nil),
		up:       prometheus.NewDesc("toolnexus_source_up", "1 when a source instance is connected, 0 otherwise (failed, restarting, disabled).", []string{"source", "name"}, nil),
		revision: prometheus.NewDesc("toolnexus_registry_revision", "The registry revision; goes up by one with every change.", nil, nil),
	})
}

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.tools
	ch <- c.up
	ch <- c.revision
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	tools, instances, rev := c.fn()
	for src, n := range tools {
		ch <- prometheus.MustNewConstMetric(c.tools, prometheus.GaugeValue, float64(n), src)
	}
	for _, s := range instances {
		v := 0.0
		if s.Up {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, v, s.Kind, s.Name)
	}
	ch <- prometheus.MustNewConstMetric(c.revision, prometheus.GaugeValue, float64(rev))
}
