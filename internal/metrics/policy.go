package metrics

import (
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// Policy decisions, the values of toolnexus_policy_decisions_total's
// decision label.
const (
	DecisionAllow      = "allow"
	DecisionDeny       = "deny"
	DecisionApproval   = "approval"
	DecisionShadowDeny = "shadow_deny"
)

// Decisions are the decision label's values, in the order of the Decide*
// indexes.
var Decisions = []string{DecisionAllow, DecisionDeny, DecisionApproval, DecisionShadowDeny}

// Indexes into DecisionCounters.
const (
	DecideAllow = iota
	DecideDeny
	DecideApproval
	DecideShadowDeny
)

// DecisionCounters are one source's decision series, by Decide* index.
type DecisionCounters [4]prometheus.Counter

// Policy holds the series of Cedar policies and rate limits.
type Policy struct {
	Decisions   *prometheus.CounterVec // source, decision
	RateLimited *prometheus.CounterVec // source

	// bySource holds each source's decision counters, read without a
	// lock on the call path; mu serialises adding a source.
	bySource atomic.Pointer[map[string]*DecisionCounters]
	mu       sync.Mutex
}

// For returns source's decision counters, made on first use.
func (p *Policy) For(source string) *DecisionCounters {
	if c := (*p.bySource.Load())[source]; c != nil {
		return c
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	old := *p.bySource.Load()
	if c := old[source]; c != nil {
		return c
	}
	c := new(DecisionCounters)
	for i, d := range Decisions {
		c[i] = p.Decisions.WithLabelValues(source, d)
	}
	next := make(map[string]*DecisionCounters, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	next[source] = c
	p.bySource.Store(&next)
	return c
}

// NewPolicy registers the policy series with reg, each source's created at
// 0 so a dashboard shows 0 before the first decision.
func NewPolicy(reg prometheus.Registerer, sources []string) *Policy {
	p := &Policy{
		Decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolnexus_policy_decisions_total",
			Help: "Cedar policy decisions by the tool's source and decision (allow, deny, approval, shadow_deny).",
		}, []string{"source", "decision"}),
		RateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolnexus_rate_limited_total",
			Help: "Calls refused by limits.principals or limits.tools.NAME.callsPerSecond, by the tool's source.",
		}, []string{"source"}),
	}
	reg.MustRegister(p.Decisions, p.RateLimited)
	empty := map[string]*DecisionCounters{}
	p.bySource.Store(&empty)
	for _, s := range append([]string{UnknownLabel}, sources...) {
		p.RateLimited.WithLabelValues(s)
		p.For(s)
	}
	return p
}
