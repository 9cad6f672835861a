package metrics

import "github.com/prometheus/client_golang/prometheus"

// NewAuthFailures creates toolnexus_auth_failures_total with every reason
// at 0 and returns the counters indexed as reasons is (reasons[i] names
// counter i), so counting a refusal takes no label lookup.
func NewAuthFailures(reg prometheus.Registerer, reasons []string) []prometheus.Counter {
	vec := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "toolnexus_auth_failures_total",
		Help: "Credentials refused, by reason (missing, malformed, unknown_token, bad_signature, unknown_key, alg_none, alg_mismatch, expired, not_yet_valid, wrong_issuer, wrong_audience, missing_scope, bad_claims, provider_unreachable).",
	}, []string{"reason"})
	reg.MustRegister(vec)
	out := make([]prometheus.Counter, len(reasons))
	for i, r := range reasons {
		out[i] = vec.WithLabelValues(r)
	}
	return out
}

// NewGroupsUnmatched creates toolnexus_auth_groups_unmatched_total: JWTs
// that verified but none of whose groups is an auth.groups entry, so the
// caller gets no tools (not a refusal, hence not an auth failure reason).
func NewGroupsUnmatched(reg prometheus.Registerer) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "toolnexus_auth_groups_unmatched_total",
		Help: "Verified JWTs none of whose groups is an auth.groups entry (the caller gets no tools); counted once per token.",
	})
	reg.MustRegister(c)
	return c
}
