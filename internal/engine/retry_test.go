package engine_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/internal/engine"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
)

// lateServer is an HTTP server on a loopback address that refuses
// connections (nothing listens) until up is called: an upstream that
// starts after toolnexus, as pods that start together do.
type lateServer struct {
	t    *testing.T
	addr string
	h    http.Handler
	mu   sync.Mutex
	srv  *http.Server
}

func newLateServer(t *testing.T, h http.Handler) *lateServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close() // down: connections to addr are refused
	s := &lateServer{t: t, addr: addr, h: h}
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.srv != nil {
			_ = s.srv.Close()
		}
	})
	return s
}

func (s *lateServer) url(path string) string { return "http://" + s.addr + path }

func (s *lateServer) up() {
	s.t.Helper()
	var l net.Listener
	var err error
	for range 50 { // the port was free a moment ago; another test may hold it briefly
		if l, err = net.Listen("tcp", s.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		s.t.Fatalf("listen %s: %v", s.addr, err)
	}
	s.mu.Lock()
	s.srv = &http.Server{Handler: s.h}
	s.mu.Unlock()
	go func() { _ = s.srv.Serve(l) }()
}

// mcpHandler is a streamable-HTTP MCP server (go-sdk) with one tool, "hello".
func mcpHandler() http.Handler {
	srv := sdk.NewServer(&sdk.Implementation{Name: "late", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "hello", Description: "says hello"},
		func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "hello"}}}, nil, nil
		})
	// Stateless: no server session outlives a request, so none is left
	// running when the test's HTTP server closes (goleak).
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{Stateless: true})
}

func specHandler(t *testing.T) http.Handler {
	spec, err := os.ReadFile("../../pkg/sources/http/testdata/petstore-3.0.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(spec) })
}

func waitTool(t *testing.T, reg *registry.Registry, name string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if _, ok := reg.Snapshot().Lookup(name); ok {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("tool %s did not appear within %v", name, within)
}

func state(e *engine.Engine, id string) sources.Status {
	for _, s := range e.Sources() {
		if s.Layer.String() == id {
			return s.Status
		}
	}
	return sources.Status{}
}

// An MCP server and an OpenAPI spec URL that are down when the engine
// starts come back on their own, within the backoff, with no reload.
func TestFailedSourcesComeBackWithinTheBackoff(t *testing.T) {
	e, reg, dir := newEngine(t)
	mcpSrv := newLateServer(t, mcpHandler())
	specSrv := newLateServer(t, specHandler(t))
	cfg := parse(t, dir, `{"builtins": false, "skills": [],
		"mcpServers": {"late": {"url": "`+mcpSrv.url("/mcp")+`", "timeout": 2000,
			"restart": {"initialBackoff": 100, "maxBackoff": 400}}},
		"openapi": [{"spec": "`+specSrv.url("/spec.yaml")+`", "baseUrl": "http://127.0.0.1:1", "prefix": "pets_"}]}`)
	rep, err := e.Apply(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Failed) != 2 {
		t.Fatalf("failed at start = %v; want the MCP server and the spec", rep.Failed)
	}
	if st := state(e, "mcp/late"); st.State != sources.Failed || st.Error == "" {
		t.Fatalf("mcp/late while down = %+v", st)
	}
	mcpSrv.up()
	specSrv.up()
	// MCP: 400ms max backoff; http uses the MCP defaults (250ms doubling).
	waitTool(t, reg, "late_hello", 5*time.Second)
	waitTool(t, reg, "pets_listPets", 10*time.Second)
	for _, id := range []string{"mcp/late", "http/http"} {
		if st := state(e, id); st.State != sources.Connected {
			t.Errorf("%s after coming back = %+v", id, st)
		}
	}
}

// A reload retries a failed source at once, though its config did not
// change: "rebuilt" names it and its tools are there when Apply returns.
func TestReloadRetriesAFailedSourceAtOnce(t *testing.T) {
	e, reg, dir := newEngine(t)
	mcpSrv := newLateServer(t, mcpHandler())
	// A long backoff: only the reload can bring it back within the test.
	text := `{"builtins": false, "skills": [], "mcpServers": {"late": {"url": "` + mcpSrv.url("/mcp") + `",
		"timeout": 2000, "restart": {"initialBackoff": 600000, "maxBackoff": 600000}}}}`
	if _, err := e.Apply(parse(t, dir, text)); err != nil {
		t.Fatal(err)
	}
	mcpSrv.up()
	rep, err := e.Apply(parse(t, dir, text))
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(rep.Started); got != "mcp/late" || len(rep.Failed) != 0 {
		t.Fatalf("reload rebuilt [%s], failed %v; want mcp/late rebuilt and started", got, rep.Failed)
	}
	if _, ok := reg.Snapshot().Lookup("late_hello"); !ok {
		t.Fatal("late_hello missing after the reload")
	}
	// A source that is up is not rebuilt by the next reload.
	rep, _ = e.Apply(parse(t, dir, text))
	if len(rep.Started) != 0 {
		t.Fatalf("second reload rebuilt %s", ids(rep.Started))
	}
}

// Close ends the retry loops: no goroutine outlives the engine (goleak in
// TestMain), even with a retry pending.
func TestCloseEndsRetries(t *testing.T) {
	dir := t.TempDir()
	e := engine.New(registry.New(), engine.Options{})
	if _, err := e.Apply(parse(t, dir, `{"builtins": false, "skills": [], "mcpServers": {"gone": {"url": "http://127.0.0.1:1/mcp",
		"timeout": 500, "restart": {"initialBackoff": 10, "maxBackoff": 20}}}}`)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // a few retries
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.Close(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatal(err)
	}
	if st := state(e, "mcp/gone"); st.State != sources.Failed {
		t.Fatalf("status after Close = %+v", st)
	}
}

// An http source with one spec up and one down serves the first spec's
// tools while it retries the second; a retry that is no better changes
// nothing (no new revision, so watchers and MCP clients are not told of a
// change every retry), and the second spec's tools join once it is up.
func TestPartlyFailedSourceKeepsServingWhileRetrying(t *testing.T) {
	e, reg, dir := newEngine(t)
	upSrv := newLateServer(t, specHandler(t))
	upSrv.up()
	downSrv := newLateServer(t, specHandler(t))
	cfg := parse(t, dir, `{"builtins": false, "skills": [], "openapi": [
		{"spec": "`+upSrv.url("/a.yaml")+`", "baseUrl": "http://127.0.0.1:1", "prefix": "a_"},
		{"spec": "`+downSrv.url("/b.yaml")+`", "baseUrl": "http://127.0.0.1:1", "prefix": "b_"}]}`)
	if _, err := e.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	waitTool(t, reg, "a_listPets", time.Second)
	if st := state(e, "http/http"); st.State != sources.Failed {
		t.Fatalf("http with one spec down = %+v", st)
	}
	rev := reg.Snapshot().Revision()
	time.Sleep(1200 * time.Millisecond) // retries at 250, 750 ms: both still fail
	if got := reg.Snapshot().Revision(); got != rev {
		t.Errorf("revision moved %d → %d while nothing changed", rev, got)
	}
	if _, ok := reg.Snapshot().Lookup("a_listPets"); !ok {
		t.Fatal("the spec that loaded stopped being served during the retries")
	}
	downSrv.up()
	waitTool(t, reg, "b_listPets", 10*time.Second)
	if _, ok := reg.Snapshot().Lookup("a_listPets"); !ok {
		t.Fatal("a_listPets gone after b came back")
	}
}
