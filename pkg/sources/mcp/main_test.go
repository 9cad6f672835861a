package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolnexus/toolnexus/internal/sandbox"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
	"golang.org/x/sys/unix"

	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/mcp"
	"github.com/toolnexus/toolnexus/pkg/sources/mcp/internal/testserver"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// serverBin is the stdio test server, built once for the package.
var serverBin string

func TestMain(m *testing.M) {
	sandbox.EnterHelper() // commands in these tests are sandboxed: this binary is also their helper
	dir, err := os.MkdirTemp("", "mcp-testserver-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	serverBin = filepath.Join(dir, "mcptestserver")
	build := exec.Command("go", "build", "-o", serverBin, "github.com/toolnexus/toolnexus/pkg/sources/mcp/internal/testserver/mcptestserver")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the test server: %v\n%s", err, out)
		os.Exit(1)
	}
	// The package's internal tests find the binary here.
	_ = os.Setenv("MCP_TESTSERVER_BIN", serverBin)
	code := m.Run()
	_ = os.RemoveAll(dir)
	if code == 0 {
		// Every test closes its sources: nothing they started may remain.
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// waitTimeout bounds waits for something the source does in the
// background; it is a deadline for a failing test, never a delay.
const waitTimeout = 20 * time.Second

// localConfig runs the stdio test server with fast restarts.
func localConfig(args ...string) mcp.ServerConfig {
	return mcp.ServerConfig{
		Type:    mcp.TypeLocal,
		Command: append([]string{serverBin}, args...),
		Timeout: 10000,
		Restart: mcp.Restart{InitialBackoff: 10, MaxBackoff: 100, ResetAfter: 60000},
	}
}

func remoteConfig(url string) mcp.ServerConfig {
	return mcp.ServerConfig{
		Type:    mcp.TypeRemote,
		URL:     url,
		Timeout: 10000,
		Restart: mcp.Restart{InitialBackoff: 10, MaxBackoff: 100, ResetAfter: 60000},
	}
}

// httpServer serves a test server over streamable HTTP on 127.0.0.1.
func httpServer(t testing.TB, opts testserver.Options) (*testserver.Server, *httptest.Server) {
	t.Helper()
	srv := testserver.New(opts)
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv.Server }, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	t.Cleanup(srv.Stop) // runs first: frees handlers that ts.Close would wait for
	return srv, ts
}

// start starts a source against a fresh registry and closes it at cleanup.
func start(t testing.TB, name string, cfg mcp.ServerConfig) (*registry.Registry, sources.Source) {
	t.Helper()
	reg := registry.New()
	src := mcp.New(name, cfg, testEnv)
	t.Cleanup(func() { _ = src.Close(context.Background()) })
	if err := src.Start(context.Background(), reg); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return reg, src
}

func call(t testing.TB, reg *registry.Registry, name, args string) tool.Result {
	t.Helper()
	return testutil.Direct{Reg: reg}.Execute(context.Background(), name, tool.Call{Arguments: json.RawMessage(args)})
}

func names(s *registry.Snapshot) []string {
	var out []string
	for _, e := range s.Entries() {
		out = append(out, e.Tool.Name)
	}
	return out
}

// waitFor reads registry changes until cond holds for the new snapshot.
func waitFor(t testing.TB, w *registry.Watcher, what string, cond func(*registry.Snapshot) bool) *registry.Snapshot {
	t.Helper()
	timeout := time.NewTimer(waitTimeout)
	defer timeout.Stop()
	for {
		select {
		case c, ok := <-w.C():
			if !ok {
				t.Fatalf("watcher closed while waiting for %s", what)
			}
			if cond(c.Next) {
				return c.Next
			}
		case <-timeout.C:
			t.Fatalf("no registry change with %s within %v", what, waitTimeout)
		}
	}
}

// processGone waits until the process pid has exited (a zombie counts:
// it no longer runs). The pidfd must be opened while the process still
// exists, so callers open it first with watchProcess.
func watchProcess(t testing.TB, pid int) func() bool {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatalf("pidfd_open(%d): %v", pid, err)
	}
	t.Cleanup(func() { _ = unix.Close(fd) })
	return func() bool {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(fds, int(waitTimeout.Milliseconds()))
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return err == nil && n == 1
		}
	}
}

// gatedPublisher holds every Replace after the first until the gate opens,
// so a test can observe a restarting server deterministically.
type gatedPublisher struct {
	*registry.Registry
	n    atomic.Int32
	gate chan struct{}
}

func (g *gatedPublisher) Replace(id registry.LayerID, tools []tool.Tool) error {
	if g.n.Add(1) > 1 {
		<-g.gate
	}
	return g.Registry.Replace(id, tools)
}

func mustContain(t testing.TB, got, want string) {
	t.Helper()
	if !strings.Contains(got, want) {
		t.Fatalf("%q does not contain %q", got, want)
	}
}

// testEnv keeps the sources' logs out of the test output.
var testEnv = sources.Env{Logger: slog.New(slog.DiscardHandler)}
