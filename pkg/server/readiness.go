package server

import (
	"time"

	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/every"
	"github.com/toolnexus/toolnexus/pkg/sources"
)

// readinessInterval is how often server.readyNeedsSources looks at the
// sources: a source the engine brings back turns the server ready within it.
const readinessInterval = time.Second

// toolnexusServices are the services whose health follows the sources
// under server.readyNeedsSources. The overall service ("") does not: a
// liveness probe on it must not restart a pod that only waits for an
// upstream (the restart would not bring the upstream up).
var toolnexusServices = []string{
	pb.RegistryService_ServiceDesc.ServiceName,
	pb.SourceService_ServiceDesc.ServiceName,
	pb.SessionService_ServiceDesc.ServiceName,
}

// setServing turns the whole health service SERVING or NOT_SERVING (start,
// shutdown); while serving, the toolnexus services then follow the sources
// if the config asks.
func (s *Server) setServing(on bool) {
	s.serving.Store(on)
	s.publishHealth()
}

// refreshReadiness re-applies server.readyNeedsSources (the ticker, a reload).
func (s *Server) refreshReadiness() { s.publishHealth() }

// publishHealth sets the health service from the three things it follows:
// serving (start, shutdown), the control plane (cluster.redis.required,
// cluster.go) and, for the toolnexus services only, the sources
// (server.readyNeedsSources). Called from start, shutdown, the readiness
// ticker and the cluster's up/down callback, so it is serialised.
func (s *Server) publishHealth() {
	s.healthMu.Lock()
	defer s.healthMu.Unlock()
	st := healthpb.HealthCheckResponse_NOT_SERVING
	if s.healthy() {
		st = healthpb.HealthCheckResponse_SERVING
	}
	s.health.SetServingStatus("", st)
	if st == healthpb.HealthCheckResponse_SERVING {
		st = s.readiness()
	}
	setAll(s.health, st)
}

// readiness is SERVING unless server.readyNeedsSources is on and a
// configured source has failed.
func (s *Server) readiness() healthpb.HealthCheckResponse_ServingStatus {
	if cfg := s.core.Config(); cfg == nil || !cfg.Server.ReadyNeedsSources {
		return healthpb.HealthCheckResponse_SERVING
	}
	for _, src := range s.core.Sources() {
		if src.State == sources.Failed {
			return healthpb.HealthCheckResponse_NOT_SERVING
		}
	}
	return healthpb.HealthCheckResponse_SERVING
}

func setAll(h *health.Server, st healthpb.HealthCheckResponse_ServingStatus) {
	for _, svc := range toolnexusServices {
		h.SetServingStatus(svc, st)
	}
}

// watchReadiness re-checks the sources every readinessInterval until stop.
func (s *Server) watchReadiness() (stop func()) {
	return every.Start(readinessInterval, s.refreshReadiness)
}
