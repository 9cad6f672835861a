package server

import (
	"context"
	"reflect"
	"sort"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"google.golang.org/grpc"
	"google.golang.org/grpc/stats"

	"github.com/toolnexus/toolnexus/internal/audit"
	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/core"
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
		// Probes and tooling would fill the trace store with root spans.
		otelgrpc.WithFilter(func(info *stats.RPCTagInfo) bool {
			return !strings.HasPrefix(info.FullMethodName, "/grpc.health.v1.Health/") &&
				!strings.HasPrefix(info.FullMethodName, "/grpc.reflection.")
		}),
		// grpc_server_* (internal/grpcapi) are the RPC metrics.
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

// auditReload writes the reload's audit line: who (the admin token for
// SourceService.Reload), how it was triggered and how it ended.
func (s *Server) auditReload(ctx context.Context, trigger string, rep core.Report, err error) {
	a := s.core.Audit()
	if !a.On() {
		return
	}
	r := audit.Reload{Trigger: trigger, Err: err, Revision: rep.Revision, Rebuilt: rep.Started, Removed: rep.Removed}
	if p := auth.From(ctx); p != nil {
		r.Principal = p.Name
	}
	for id := range rep.Failed {
		r.Failed = append(r.Failed, id)
	}
	sort.Strings(r.Failed)
	a.Reload(ctx, r)
}

// tracingChanged names the telemetry section when a reload changed it:
// the tracer provider is built once, at start.
func tracingChanged(old, next *config.Config) []string {
	if reflect.DeepEqual(old.Telemetry, next.Telemetry) {
		return nil
	}
	return []string{"telemetry"}
}
