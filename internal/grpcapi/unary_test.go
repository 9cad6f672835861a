package grpcapi_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/internal/grpcapi"
	"github.com/toolnexus/toolnexus/internal/testutil"
)

// panickingHealth panics in Check: a handler other than Execute's.
type panickingHealth struct {
	healthpb.UnimplementedHealthServer
}

func (panickingHealth) Check(context.Context, *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	panic("check exploded")
}

// executePanicsDesc is RegistryService with an Execute whose handler
// panics after the interceptor let it run — where decoding the arguments
// or encoding a result would panic, outside the executor's own guard.
func executePanicsDesc() *grpc.ServiceDesc {
	desc := pb.RegistryService_ServiceDesc
	desc.HandlerType = (*any)(nil)
	desc.Methods = []grpc.MethodDesc{{MethodName: "Execute", Handler: func(_ any, ctx context.Context, dec func(any) error, in grpc.UnaryServerInterceptor) (any, error) {
		req := new(pb.ExecuteRequest)
		if err := dec(req); err != nil {
			return nil, err
		}
		info := &grpc.UnaryServerInfo{FullMethod: pb.RegistryService_Execute_FullMethodName}
		return in(ctx, req, info, func(context.Context, any) (any, error) { panic("encoder exploded") })
	}}}
	desc.Streams = nil
	return &desc
}

// The unary chain is one interceptor (interceptors.go); what the separate
// steps did must hold: over real loopback gRPC, a panic in Execute's
// handler is an is_error result with OUTCOME_PANIC, counted and answered;
// a panic in another method's handler is Internal, not counted as handled;
// auth refuses before any handler and is counted; the server serves on.
func TestUnaryChainPanicsAuthAndMetrics(t *testing.T) {
	t.Parallel()
	cfg, err := config.Parse([]byte(`{"builtins": false, "debug": true,
		"auth": {"tokens": [{"name": "agent", "token": "agent-token-0123456789"}]}}`), "", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	c, err := core.New(cfg, core.Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	api := grpcapi.New(c, grpcapi.Options{Logger: log, Metrics: reg, Shutdown: make(chan struct{})})
	gs := grpc.NewServer(api.ServerOptions()...)
	gs.RegisterService(executePanicsDesc(), struct{}{})
	healthpb.RegisterHealthServer(gs, panickingHealth{})
	t.Cleanup(func() { // after the server stopped
		if err := c.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	conn := testutil.ServeGRPC(t, gs)
	ctx := bearer(context.Background(), "agent-token-0123456789")
	rs := pb.NewRegistryServiceClient(conn)

	t.Run("Execute's handler panics: a result", func(t *testing.T) {
		for range 2 {
			resp, err := rs.Execute(ctx, &pb.ExecuteRequest{Name: "debug_echo", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{}`}})
			if err != nil {
				t.Fatalf("Execute: %v (want a result, not a gRPC error)", err)
			}
			if r := resp.GetResult(); !r.GetIsError() || r.GetOutcome() != pb.Outcome_OUTCOME_PANIC || !strings.Contains(r.GetOutput(), "encoder exploded") {
				t.Fatalf("result %v: want is_error, OUTCOME_PANIC naming the panic", r)
			}
		}
	})
	t.Run("another handler panics: Internal", func(t *testing.T) {
		_, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{})
		if status.Code(err) != codes.Internal || strings.Contains(err.Error(), "check exploded") {
			t.Fatalf("Check: %v: want Internal without the panic's text", err)
		}
	})
	t.Run("no token: Unauthenticated before any handler", func(t *testing.T) {
		_, err := rs.Execute(context.Background(), &pb.ExecuteRequest{Name: "debug_echo"})
		if status.Code(err) != codes.Unauthenticated {
			t.Fatalf("Execute without a token: %v", err)
		}
	})
	t.Run("the series", func(t *testing.T) {
		for _, tc := range []struct {
			metric, method, code string
			want                 float64
		}{
			{"grpc_server_started_total", "Execute", "", 3},
			{"grpc_server_msg_received_total", "Execute", "", 3},
			{"grpc_server_msg_sent_total", "Execute", "", 2},
			{"grpc_server_handled_total", "Execute", "OK", 2},
			{"grpc_server_handled_total", "Execute", "Unauthenticated", 1},
			{"grpc_server_started_total", "Check", "", 1},
			{"grpc_server_handled_total", "Check", "Internal", 0}, // unwound past the metrics, as before
		} {
			if got := seriesValue(t, reg, tc.metric, tc.method, tc.code); got != tc.want {
				t.Errorf("%s{grpc_method=%q, grpc_code=%q} = %v, want %v", tc.metric, tc.method, tc.code, got, tc.want)
			}
		}
		if n := seriesCount(t, reg, "grpc_server_handling_seconds"); n != 2 {
			t.Errorf("grpc_server_handling_seconds: %d series, want 2 (Execute and Check)", n)
		}
	})
}

// seriesValue is the value of the series of metric with grpc_method method
// (and grpc_code code, if set), 0 if there is none.
func seriesValue(t *testing.T, reg *prometheus.Registry, metric, method, code string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != metric {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["grpc_method"] == method && (code == "" || labels["grpc_code"] == code) {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// seriesCount is how many series metric has.
func seriesCount(t *testing.T, reg *prometheus.Registry, metric string) int {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == metric {
			return len(mf.GetMetric())
		}
	}
	return 0
}
