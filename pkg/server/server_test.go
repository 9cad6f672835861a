package server_test

import (
	"context"
	"strings"
	"testing"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil/inproc"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// debugOnly and echoTool are the in-process rig's, for the whole-server
// tests here (the protocol tests moved to internal/grpcapi).
const debugOnly = inproc.DebugOnly

var echoTool = inproc.Echo

// TestHealthReflectionAndGracefulDrain: health and reflection are served,
// and Shutdown drains an in-flight call while health turns NOT_SERVING —
// the whole server's shutdown, so it stays here.
func TestHealthReflectionAndGracefulDrain(t *testing.T) {
	t.Parallel()
	// hold signals when it is running and finishes when released, so the
	// test knows the call is in flight without polling anything.
	running, release := make(chan struct{}), make(chan struct{})
	hold := tool.Must(tool.New("hold", func(ctx context.Context, _ tool.Call) tool.Result {
		close(running)
		select {
		case <-release:
			return tool.Success("released", nil)
		case <-ctx.Done():
			return tool.ContextResult(ctx, "hold")
		}
	}))
	f := start(t, debugOnly, hold)
	hc := healthpb.NewHealthClient(f.conn)
	for _, svc := range []string{"", "toolnexus.v1.RegistryService", "toolnexus.v1.SourceService"} {
		r, err := hc.Check(context.Background(), &healthpb.HealthCheckRequest{Service: svc})
		if err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("health %q: %v %v", svc, r, err)
		}
	}
	rc, err := rpb.NewServerReflectionClient(f.conn).ServerReflectionInfo(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Send(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	rr, err := rc.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var svcs []string
	for _, s := range rr.GetListServicesResponse().GetService() {
		svcs = append(svcs, s.GetName())
	}
	if !strings.Contains(strings.Join(svcs, ","), "toolnexus.v1.RegistryService") {
		t.Fatalf("reflection lists %v", svcs)
	}
	_ = rc.CloseSend()

	// An in-flight call finishes during shutdown; health turns NOT_SERVING.
	// (Watch holds a stream open so we can see the status flip.)
	watch, err := hc.Watch(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := watch.Recv(); err != nil || r.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("watch first: %v %v", r, err)
	}
	result := make(chan *pb.ToolResult, 1)
	go func() {
		resp, err := f.reg.Execute(context.Background(), &pb.ExecuteRequest{Name: "hold"})
		if err != nil {
			t.Errorf("in-flight call failed during drain: %v", err)
		}
		result <- resp.GetResult()
	}()
	<-running
	stopped := make(chan struct{})
	go func() { _ = f.srv.Shutdown(context.Background()); close(stopped) }()
	r, err := watch.Recv()
	if err != nil || r.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("health after shutdown began: %v %v, want NOT_SERVING", r, err)
	}
	select {
	case <-stopped:
		t.Fatal("shutdown finished while a call was still running")
	default:
	}
	close(release)
	if r := <-result; r.GetOutput() != "released" || r.GetIsError() {
		t.Fatalf("drained call result %v", r)
	}
	f.conn.Close() // ends the health watch stream, which also holds the drain
	<-stopped
}
