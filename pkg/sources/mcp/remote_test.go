package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/mcp"
	"github.com/toolnexus/toolnexus/pkg/sources/mcp/internal/testserver"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

func TestHeadersExpandedAndNeverLeaked(t *testing.T) {
	const secret = "s3cr3t-value"
	t.Setenv("MCP_TEST_TOKEN", secret)
	srv := testserver.New(testserver.Options{})
	var sawAuth atomic.Bool
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv.Server }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got := r.Header.Get("Authorization"); got != "Bearer "+secret {
			// A careless server that echoes the credential it refused.
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			msg, _ := json.Marshal("invalid credential " + got)
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":` + string(msg) + `}}`))
			return
		}
		sawAuth.Store(true)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(srv.Stop)

	cfg := remoteConfig(ts.URL)
	cfg.Headers = map[string]string{"Authorization": "Bearer ${MCP_TEST_TOKEN}"}
	reg, src := start(t, "auth", cfg)
	if r := call(t, reg, "auth_echo", `{"text":"in"}`); r.Output != "in" || !sawAuth.Load() {
		t.Fatalf("authorized call: %+v", r)
	}
	// The config keeps the reference, never the value (it is a reload fingerprint).
	b, _ := json.Marshal(cfg)
	if strings.Contains(string(b), secret) || !strings.Contains(string(b), "${MCP_TEST_TOKEN}") {
		t.Fatalf("config JSON = %s", b)
	}
	_ = src

	t.Run("missing variable fails that server only", func(t *testing.T) {
		cfg := remoteConfig(ts.URL)
		cfg.Headers = map[string]string{"Authorization": "Bearer ${MCP_TEST_UNSET_TOKEN}"}
		bad := mcp.New("bad", cfg, testEnv)
		defer bad.Close(context.Background())
		err := bad.Start(context.Background(), reg)
		if err == nil {
			t.Fatal("started without its header variable")
		}
		mustContain(t, err.Error(), "MCP_TEST_UNSET_TOKEN is not set")
		if st := bad.Status(); st.State != sources.Failed {
			t.Fatalf("status = %+v", st)
		}
		if r := call(t, reg, "auth_echo", `{"text":"still"}`); r.Output != "still" {
			t.Fatalf("other server after the failure: %+v", r)
		}
	})
	t.Run("wrong secret is reported without it", func(t *testing.T) {
		t.Setenv("MCP_TEST_WRONG", "wrong-"+secret)
		cfg := remoteConfig(ts.URL)
		cfg.Headers = map[string]string{"Authorization": "Bearer ${MCP_TEST_WRONG}"}
		bad := mcp.New("wrong", cfg, testEnv)
		defer bad.Close(context.Background())
		err := bad.Start(context.Background(), registry.New())
		if err == nil || strings.Contains(err.Error(), secret) || strings.Contains(bad.Status().Error, secret) {
			t.Fatalf("err = %v, status = %+v", err, bad.Status())
		}
		// The server's echo did reach the error, scrubbed.
		mustContain(t, err.Error(), "invalid credential Bearer [redacted]")
	})
}

func TestSSEFallback(t *testing.T) {
	srv := testserver.New(testserver.Options{})
	// A server from before streamable HTTP: GET opens the event stream,
	// a POST without a session is refused.
	ts := httptest.NewServer(sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv.Server }, nil))
	t.Cleanup(ts.Close)
	t.Cleanup(srv.Stop)
	for _, c := range []struct {
		name string
		cfg  func() mcp.ServerConfig
	}{
		{"auto", func() mcp.ServerConfig { return remoteConfig(ts.URL) }},
		{"type sse", func() mcp.ServerConfig { c := remoteConfig(ts.URL); c.Transport = mcp.TransportSSE; return c }},
	} {
		t.Run(c.name, func(t *testing.T) {
			reg, _ := start(t, "old", c.cfg())
			if r := call(t, reg, "old_multi", `{}`); r.Output != "one\ntwo" {
				t.Fatalf("call over SSE: %+v", r)
			}
		})
	}
}

// restartable is an HTTP MCP server that can be restarted: the new
// instance knows nothing of the old one's sessions, as after a redeploy.
type restartable struct {
	h    atomic.Pointer[http.Handler]
	mu   sync.Mutex
	srvs []*testserver.Server
}

func (s *restartable) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, srv := range s.srvs {
		srv.Stop()
	}
}

func (s *restartable) restart() {
	srv := testserver.New(testserver.Options{})
	s.mu.Lock()
	s.srvs = append(s.srvs, srv)
	s.mu.Unlock()
	var h http.Handler = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv.Server }, nil)
	s.h.Store(&h)
}

func (s *restartable) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	(*s.h.Load()).ServeHTTP(w, r)
}

func TestRemoteSessionDropRestarts(t *testing.T) {
	rs := &restartable{}
	rs.restart()
	ts := httptest.NewServer(rs)
	t.Cleanup(ts.Close)
	t.Cleanup(rs.stop)
	reg := registry.New()
	pub := &gatedPublisher{Registry: reg, gate: make(chan struct{})}
	src := mcp.New("r", remoteConfig(ts.URL), testEnv)
	t.Cleanup(func() { _ = src.Close(context.Background()) })
	if err := src.Start(context.Background(), pub); err != nil {
		t.Fatal(err)
	}
	w, _ := reg.Watch()
	defer w.Close()

	rs.restart() // the session the source holds is now unknown to the server
	r := call(t, reg, "r_echo", `{"text":"x"}`)
	if !r.IsError {
		t.Fatalf("call on a dropped session: %+v", r)
	}
	mustContain(t, r.Output, `MCP server "r" is down`)
	if st := src.Status(); st.State != sources.Restarting {
		t.Fatalf("status = %+v", st)
	}
	// Calls keep failing fast until the new session is in service.
	if r := call(t, reg, "r_echo", `{"text":"x"}`); !r.IsError || !strings.Contains(r.Output, "restarting") {
		t.Fatalf("second call while down: %+v", r)
	}

	close(pub.gate)
	waitFor(t, w, "the reconnected server's tools", func(s *registry.Snapshot) bool { return s.LayerCount(src.Layer()) > 0 })
	// The session goes live just after its tools are published.
	for deadline := time.Now().Add(10 * time.Second); src.Status().State != sources.Connected && time.Now().Before(deadline); {
		runtime.Gosched()
	}
	if r := call(t, reg, "r_echo", `{"text":"back"}`); r.Output != "back" {
		t.Fatalf("after reconnect: %+v", r)
	}
	if st := src.Status(); st.State != sources.Connected {
		t.Fatalf("status after reconnect = %+v", st)
	}
}

func TestTransientHTTPFailureKeepsSession(t *testing.T) {
	srv := testserver.New(testserver.Options{})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv.Server }, nil)
	var unavailable atomic.Bool
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if unavailable.Load() && r.Method == http.MethodPost {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(srv.Stop)
	reg, src := start(t, "t", remoteConfig(ts.URL))
	unavailable.Store(true)
	r := call(t, reg, "t_echo", `{"text":"x"}`)
	if !r.IsError || !strings.Contains(r.Output, "Service Unavailable") {
		t.Fatalf("call during a 503: %+v", r)
	}
	if st := src.Status(); st.State != sources.Connected {
		t.Fatalf("a transient 503 took the server down: %+v", st)
	}
	unavailable.Store(false)
	if r := call(t, reg, "t_echo", `{"text":"ok"}`); r.Output != "ok" {
		t.Fatalf("after the 503: %+v", r)
	}
}

func TestCloseDuringCallReturns(t *testing.T) {
	transports(t, func(t *testing.T, cfg mcp.ServerConfig, _ []string) {
		reg := registry.New()
		src := mcp.New("busy", cfg, testEnv)
		if err := src.Start(context.Background(), reg); err != nil {
			t.Fatal(err)
		}
		done := make(chan tool.Result)
		go func() {
			// No deadline: only Close can end this call.
			done <- testutil.Direct{Reg: reg}.Execute(context.Background(), "busy_slow", tool.Call{Arguments: json.RawMessage(`{}`)})
		}()
		// Wait until the call is in flight on the server.
		waitInFlight(t, reg, "busy")
		if err := src.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if r := <-done; !r.IsError {
			t.Fatalf("call cut by Close: %+v", r)
		}
	})
}

// waitInFlight asks the server until a slow call has begun; each ask is a
// round trip, not a sleep.
func waitInFlight(t *testing.T, reg *registry.Registry, prefix string) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for call(t, reg, prefix+"_slow_started", `{}`).Output != "1" {
		if time.Now().After(deadline) {
			t.Fatal("the slow call never reached the server")
		}
	}
}
