package server_test

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/server"
)

// laterMCP is a streamable-HTTP MCP server (go-sdk) on a loopback address
// where nothing listens until up: an upstream that starts after toolnexus.
type laterMCP struct {
	addr string
	mu   sync.Mutex
	srv  *http.Server
}

func newLaterMCP(t *testing.T) *laterMCP {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := &laterMCP{addr: l.Addr().String()}
	_ = l.Close()
	t.Cleanup(func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.srv != nil {
			_ = m.srv.Close()
		}
	})
	return m
}

func (m *laterMCP) url() string { return "http://" + m.addr + "/mcp" }

func (m *laterMCP) up(t *testing.T) {
	t.Helper()
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "later", Version: "1"}, nil)
	mcpsdk.AddTool(s, &mcpsdk.Tool{Name: "ping", Description: "answers pong"},
		func(context.Context, *mcpsdk.CallToolRequest, struct{}) (*mcpsdk.CallToolResult, any, error) {
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: "pong"}}}, nil, nil
		})
	var l net.Listener
	var err error
	for range 50 {
		if l, err = net.Listen("tcp", m.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	m.srv = &http.Server{Handler: mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return s },
		&mcpsdk.StreamableHTTPOptions{Stateless: true})}
	m.mu.Unlock()
	go func() { _ = m.srv.Serve(l) }()
}

func sourceState(t *testing.T, f *fixture, name string) *pb.Source {
	t.Helper()
	resp, err := f.src.ListSources(context.Background(), &pb.ListSourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range resp.GetSources() {
		if s.GetName() == name {
			return s
		}
	}
	t.Fatalf("no source %q in %v", name, resp.GetSources())
	return nil
}

func healthOf(t *testing.T, f *fixture, service string) healthpb.HealthCheckResponse_ServingStatus {
	t.Helper()
	resp, err := healthpb.NewHealthClient(f.conn).Check(context.Background(), &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		t.Fatal(err)
	}
	return resp.GetStatus()
}

// An MCP server down when the server starts comes back on its own: its
// tools appear with no restart and no reload, and under
// server.readyNeedsSources the toolnexus services turn SERVING with it
// (the overall service, a liveness probe's, stays SERVING throughout).
func TestDownAtStartUpLaterOverTheWire(t *testing.T) {
	up := newLaterMCP(t)
	f := start(t, `{"builtins": false, "server": {"readyNeedsSources": true},
		"mcpServers": {"later": {"url": "`+up.url()+`", "timeout": 2000, "restart": {"initialBackoff": 100, "maxBackoff": 300}}}}`)
	if st := sourceState(t, f, "later"); st.GetStatus() != "failed" {
		t.Fatalf("later at start = %v", st)
	}
	if got := healthOf(t, f, pb.RegistryService_ServiceDesc.ServiceName); got != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Errorf("RegistryService while a source is down = %v, want NOT_SERVING (readyNeedsSources)", got)
	}
	if got := healthOf(t, f, ""); got != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("overall health while a source is down = %v, want SERVING (liveness)", got)
	}
	up.up(t)
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := f.exec(t, "later_ping", `{}`)
		if r.GetOutput() == "pong" && healthOf(t, f, pb.RegistryService_ServiceDesc.ServiceName) == healthpb.HealthCheckResponse_SERVING {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("later_ping = %v, health %v, source %v", r, healthOf(t, f, pb.RegistryService_ServiceDesc.ServiceName), sourceState(t, f, "later"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st := sourceState(t, f, "later"); st.GetStatus() != "connected" {
		t.Fatalf("later after coming back = %v", st)
	}
}

// Without server.readyNeedsSources a failed source leaves the server
// SERVING (the default): the other tools are served meanwhile.
func TestFailedSourceKeepsServingByDefault(t *testing.T) {
	f := start(t, `{"builtins": false, "mcpServers": {"gone": {"url": "http://127.0.0.1:1/mcp", "timeout": 500}}}`)
	if got := healthOf(t, f, pb.RegistryService_ServiceDesc.ServiceName); got != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("RegistryService = %v, want SERVING", got)
	}
}

// The embedded default configures no http tools and no skill directories:
// no toolnexus_source_up series for them (a "source down" alert must not
// fire on a fresh install), but one for the builtins it does configure.
func TestSourceUpOnlyForConfiguredSources(t *testing.T) {
	f := start(t, `{}`)
	body := f.scrape(t)
	for _, name := range []string{"http", "skill"} {
		if line := testutil.MetricLine(body, "toolnexus_source_up", `name="`+name+`"`); line != "" {
			t.Errorf("unconfigured source exports %q", line)
		}
	}
	if line := testutil.MetricLine(body, "toolnexus_source_up", `name="builtin"`); !strings.HasSuffix(line, " 1") {
		t.Errorf("source_up{builtin} = %q, want 1", line)
	}
}

// A source that fails is logged once as a warning (the engine's, with the
// reason and the retry), not once per layer that saw it; its retries log
// at debug, so a source that stays down does not flood the log.
func TestSourceFailureIsLoggedOnce(t *testing.T) {
	t.Parallel()
	var logs testutil.Buffer
	_, _, stop := launch(t, `{"builtins": false, "skills": [], "mcpServers": {"broken": {"command": "/nonexistent/toolnexus-broken",
		"restart": {"initialBackoff": 20, "maxBackoff": 40}}}}`, func(o *server.Options) {
		o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	})
	time.Sleep(300 * time.Millisecond) // several retries fail meanwhile
	stop()
	var warns []string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "level=WARN") && strings.Contains(l, "broken") {
			warns = append(warns, l)
		}
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "retrying in the background") || !strings.Contains(warns[0], "/nonexistent/toolnexus-broken") {
		t.Fatalf("warnings about the failed source: %d, want 1 naming the reason and the retry:\n%s", len(warns), strings.Join(warns, "\n"))
	}
}
