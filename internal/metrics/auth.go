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
