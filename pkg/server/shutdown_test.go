package server_test

import (
	"context"
	"errors"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// A caller whose ctx ends before the grace period cuts the drain short:
// the call still running is cut off (the forced stop closes its
// connection, as when the grace period runs out) instead of holding
// Shutdown for the ten-minute grace period,
// Shutdown returns ctx's error, and a second Shutdown returns the same.
func TestShutdownContextCutsDrain(t *testing.T) {
	t.Parallel()
	running := make(chan struct{})
	hold := tool.Must(tool.New("hold", func(ctx context.Context, c tool.Call) tool.Result {
		close(running)
		<-ctx.Done()
		return tool.ContextResult(ctx, c.Name)
	}))
	f := start(t, `{"builtins": false, "skills": [], "server": {"gracePeriod": 600000}}`, hold)
	result := make(chan *pb.ToolResult, 1)
	go func() {
		resp, err := f.reg.Execute(context.Background(), &pb.ExecuteRequest{Name: "hold"})
		if err != nil && status.Code(err) != codes.Unavailable {
			t.Errorf("in-flight call: %v, want UNAVAILABLE from the forced stop", err)
		}
		result <- resp.GetResult()
	}()
	<-running
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := f.srv.Shutdown(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Shutdown with a cancelled ctx = %v, want context.Canceled", err)
	}
	if r := <-result; r != nil && !r.GetIsError() {
		t.Errorf("the held call finished as %v, want it cancelled", r)
	}
	if err := f.srv.Shutdown(context.Background()); !errors.Is(err, context.Canceled) {
		t.Errorf("second Shutdown = %v, want the first one's result", err)
	}
}
