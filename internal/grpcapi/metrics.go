package grpcapi

import (
	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
)

// handlingBuckets are grpc_server_handling_seconds' buckets: from half a
// millisecond (an Execute of a fast tool) to two minutes (a long tool call
// at the default limits), where the provider's defaults stop at 10 s.
var handlingBuckets = []float64{.0005, .001, .005, .01, .05, .1, .5, 1, 5, 30, 120}

// newGRPCMetrics makes the standard gRPC server series of go-grpc-middleware's
// Prometheus provider, which dashboards and docs/observability.md query:
// grpc_server_started_total, grpc_server_handled_total,
// grpc_server_msg_received_total, grpc_server_msg_sent_total and the
// grpc_server_handling_seconds histogram, labelled grpc_type, grpc_service,
// grpc_method (and grpc_code). Register calls its InitializeMetrics so every
// method's series exist from the first scrape.
func newGRPCMetrics() *grpcprom.ServerMetrics {
	return grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram(grpcprom.WithHistogramBuckets(handlingBuckets)))
}
