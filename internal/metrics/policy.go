package metrics

import "github.com/prometheus/client_golang/prometheus"

// Policy decisions, the values of toolnexus_policy_decisions_total's
// decision label.
const (
	DecisionAllow      = "allow"
	DecisionDeny       = "deny"
	DecisionApproval   = "approval"
	DecisionShadowDeny = "shadow_deny"
)

// Decisions are the decision label's values, in a fixed order.
var Decisions = []string{DecisionAllow, DecisionDeny, DecisionApproval, DecisionShadowDeny}

// Policy holds the series of Cedar policies and rate limits.
type Policy struct {
	Decisions   *prometheus.CounterVec // source, decision
	RateLimited *prometheus.CounterVec // source
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
	for _, s := range append([]string{UnknownLabel}, sources...) {
		p.RateLimited.WithLabelValues(s)
		for _, d := range Decisions {
			p.Decisions.WithLabelValues(s, d)
		}
	}
	return p
}
