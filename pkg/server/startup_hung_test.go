package server_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/server"
)

// A stdio MCP server that never answers initialize (here `sleep`, which
// reads nothing and writes nothing) held the whole start for its timeout:
// neither gRPC nor /healthz listened until it gave up. The listeners now
// come up at once and the source connects behind them, shown as
// restarting; the program (server.Main, in a child process) answers its
// health check long before the hung server's 60 s timeout, and SIGTERM
// ends it without waiting for that either.
func TestHungStdioServerDoesNotDelayTheListeners(t *testing.T) {
	t.Parallel()
	if args := os.Getenv("TN_HUNG_MAIN_ARGS"); args != "" {
		os.Exit(server.Main(strings.Fields(args)))
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "toolnexus.json")
	if err := os.WriteFile(cfg, []byte(`{"skills": [], "builtins": false, "debug": true,
		"mcpServers": {"hung": {"command": "sleep", "args": ["600"], "timeout": 60000}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	grpcAddr, metricsAddr := freeAddr(t), freeAddr(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestHungStdioServerDoesNotDelayTheListeners$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("TN_HUNG_MAIN_ARGS=--config %s --workspace %s --listen %s --metrics-listen %s",
		cfg, filepath.Join(dir, "ws"), grpcAddr, metricsAddr))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	if err := testutil.StartTied(cmd); err != nil {
		t.Fatal(err)
	}
	var waitErr error
	exited := make(chan struct{})
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})

	// /healthz answers while the hung server's initialize is still waiting.
	for {
		resp, err := http.Get("http://" + metricsAddr + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Since(start) > 20*time.Second { // the hung server's timeout is 60 s
			t.Fatalf("/healthz did not answer within %v of start (err %v):\n%s", time.Since(start), err, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("/healthz answered %v after the process started", time.Since(start).Round(time.Millisecond))

	// gRPC serves: the debug tools work, and the source says it is starting.
	conn := dialGRPC(t, grpcAddr)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if r, err := pb.NewRegistryServiceClient(conn).Execute(ctx, &pb.ExecuteRequest{Name: "debug_echo", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{"x":1}`}}); err != nil || r.GetResult().GetIsError() {
		t.Fatalf("debug_echo while the hung server starts: %v %v", err, r)
	}
	srcs, err := pb.NewSourceServiceClient(conn).ListSources(ctx, &pb.ListSourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var hung *pb.Source
	for _, s := range srcs.GetSources() {
		if s.GetName() == "hung" {
			hung = s
		}
	}
	if hung == nil || hung.GetStatus() != "restarting" || !strings.Contains(hung.GetError(), "starting") {
		t.Fatalf("the hung server's status: %v; want restarting, saying it is starting", hung)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
		if waitErr != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", waitErr, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("SIGTERM did not end the server while a source was starting:\n%s", stderr.String())
	}
}
