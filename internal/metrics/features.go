package metrics

import "github.com/prometheus/client_golang/prometheus"

// Features are the series of the requests for MCP servers' resources,
// prompts and completions (resources/read, prompts/get, completion/complete,
// resources/subscribe and their gRPC RPCs), by the serving source's kind and
// instance name as toolnexus_source_up labels them.
type Features struct {
	Requests *prometheus.CounterVec   // source, name, method, outcome, protocol
	Duration *prometheus.HistogramVec // source, name, method
}

// FeatureMethods are the values of the method label.
var FeatureMethods = []string{"resources/read", "prompts/get", "completion/complete", "resources/subscribe"}

// NewFeatures creates the series and registers them with reg; the series
// of a target no source serves exist at 0 from the first scrape.
func NewFeatures(reg prometheus.Registerer, outcomes []string) *Features {
	f := &Features{
		Requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolnexus_feature_requests_total",
			Help: "Requests for MCP servers' resources, prompts and completions, by the serving source and instance (unknown for a target no server offers or the caller may not see), method, outcome and protocol (grpc, mcp).",
		}, []string{"source", "name", "method", "outcome", "protocol"}),
		Duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "toolnexus_feature_request_duration_seconds",
			Help:    "Latency of requests for MCP servers' resources, prompts and completions, by source, instance and method.",
			Buckets: DurationBuckets,
		}, []string{"source", "name", "method"}),
	}
	reg.MustRegister(f.Requests, f.Duration)
	for _, m := range FeatureMethods {
		for _, o := range outcomes {
			for _, p := range Protocols {
				f.Requests.WithLabelValues(UnknownLabel, UnknownLabel, m, o, p)
			}
		}
	}
	return f
}
