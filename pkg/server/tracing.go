package server

import (
	"context"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"google.golang.org/grpc"

	"github.com/toolnexus/toolnexus/internal/telemetry"
)

// tracingOptions continue the caller's trace on every RPC (the otelgrpc
// stats handler reads traceparent from the metadata and starts the server
// span Execute's span hangs under). None when tracing is off.
func (s *Server) tracingOptions() []grpc.ServerOption {
	if s.tracing == nil {
		return nil
	}
	return []grpc.ServerOption{grpc.StatsHandler(otelgrpc.NewServerHandler(
		otelgrpc.WithTracerProvider(s.tracing.TracerProvider()),
		otelgrpc.WithPropagators(telemetry.Propagator),
		// grpc_server_* from go-grpc-middleware are the RPC metrics.
		otelgrpc.WithMeterProvider(metricnoop.NewMeterProvider()),
	))}
}

// shutdownTracing exports the spans still buffered, bounded so that an
// unreachable collector cannot hold the exit.
func (s *Server) shutdownTracing() {
	if s.tracing == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), telemetry.ShutdownTimeout)
	defer cancel()
	if err := s.tracing.Shutdown(ctx); err != nil {
		s.log.Warn("tracing: final export failed", "error", err)
	}
}
