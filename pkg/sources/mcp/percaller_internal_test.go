package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mcpauth "github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/internal/callerctx"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/oidcop"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/tokenexchange"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// caller is what the front-ends put in a call's context: a principal that
// prints as its name and carries its verified token.
type caller struct{ name, token string }

func (c caller) String() string      { return c.name }
func (c caller) BearerToken() string { return c.token }

// sessionLog is an MCP server that names each request's user (the
// subject of its bearer token; pkg/server's test verifies signatures) and
// records which users' sessions were ended (DELETE).
type sessionLog struct {
	mu      sync.Mutex
	deleted []string
	holding chan struct{} // closed when "hold" has started
	release chan struct{} // closing it ends "hold"
}

func subjectOf(tok string) string {
	c, _ := oidcop.ClaimsOf(tok)
	sub, _ := c["sub"].(string)
	return sub
}

func startSessionLog(t testing.TB) (*sessionLog, string) {
	l := &sessionLog{holding: make(chan struct{}), release: make(chan struct{})}
	s := sdk.NewServer(&sdk.Implementation{Name: "sessions", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "whoami"}, func(_ context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: req.Extra.TokenInfo.UserID}}}, nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "hold"}, func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		close(l.holding)
		select {
		case <-l.release:
		case <-ctx.Done():
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "released"}}}, nil, nil
	})
	verify := func(_ context.Context, tok string, r *http.Request) (*mcpauth.TokenInfo, error) {
		sub := subjectOf(tok)
		if sub == "" {
			return nil, mcpauth.ErrInvalidToken
		}
		if r.Method == http.MethodDelete {
			l.mu.Lock()
			l.deleted = append(l.deleted, sub)
			l.mu.Unlock()
		}
		return &mcpauth.TokenInfo{UserID: sub, Expiration: time.Now().Add(time.Hour)}, nil
	}
	ts := httptest.NewServer(mcpauth.RequireBearerToken(verify, nil)(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	return l, ts.URL
}

func (l *sessionLog) ended() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Sorted(slices.Values(l.deleted))
}

// Caller sessions are bounded: with room for one, a second caller is
// refused (is_error naming the server) while the first one's call runs,
// and takes the place once it is idle; an idle session is closed
// (politely: the server sees its DELETE); Close ends the rest and every
// goroutine (TestMain's goleak).
func TestCallerSessionsBoundedAndIdleClosed(t *testing.T) {
	p := oidcop.Start(t, oidcop.Client{ID: "toolnexus", Secret: "s0"}, oidcop.Client{ID: "alice", Secret: "s1"}, oidcop.Client{ID: "bob", Secret: "s2"})
	up, url := startSessionLog(t)
	cfg := ServerConfig{Type: TypeRemote, URL: url, Timeout: 10000, Restart: Restart{}.withDefaults(),
		TokenExchange: &tokenexchange.Config{TokenURL: p.TokenURL, ClientID: "toolnexus", ClientSecret: "s0", Audience: "https://sessions.test"}}
	src := New("up", cfg, sources.Env{Logger: slog.New(slog.DiscardHandler)})
	src.callerMax, src.callerIdleAfter = 1, 200*time.Millisecond
	t.Cleanup(func() { _ = src.Close(context.Background()) })
	reg := registry.New()
	if err := src.Start(context.Background(), reg); err != nil {
		t.Fatal(err)
	}
	as := func(who string) context.Context {
		return callerctx.With(context.Background(), caller{who, p.Token(t, who, "https://toolnexus.test", "")})
	}
	run := func(ctx context.Context, name string) tool.Result {
		return testutil.Direct{Reg: reg}.Execute(ctx, name, tool.Call{Arguments: json.RawMessage(`{}`)})
	}
	held := make(chan tool.Result, 1)
	go func() { held <- run(as("alice"), "up_hold") }()
	<-up.holding
	if r := run(as("bob"), "up_whoami"); !r.IsError || !strings.Contains(r.Output, `MCP server "up": 1 callers are using it at once`) {
		t.Fatalf("a second caller while the only session is busy: %+v", r)
	}
	close(up.release)
	if r := <-held; r.IsError || r.Output != "released" {
		t.Fatalf("alice's held call: %+v", r)
	}
	if r := run(as("bob"), "up_whoami"); r.IsError || r.Output != "bob" {
		t.Fatalf("bob once alice's session is idle: %+v", r)
	}
	for deadline := time.Now().Add(20 * time.Second); ; {
		if got := up.ended(); slices.Equal(got, []string{"alice", "bob"}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sessions ended: %v, want alice's (evicted) and bob's (idle)", up.ended())
		}
		<-time.After(20 * time.Millisecond) // polling the server's record; the sweep runs on its own clock
	}
	src.callers.mu.Lock()
	n := len(src.callers.by)
	src.callers.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d caller sessions left after the idle sweep", n)
	}
	if r := run(as("alice"), "up_whoami"); r.IsError || r.Output != "alice" {
		t.Fatalf("alice again (a new session): %+v", r)
	}
}

// BenchmarkCallerSession is one call through the source to the same
// token-checking server on 127.0.0.1: "shared" on the one session with a
// configured Authorization header, "caller" with tokenExchange — the
// caller's cached exchanged token, its session found in the pool and its
// token set on the request. Budget: "caller" within 1.10x of "shared"
// (ns/op, alternate the rows over runs; the exchange itself happens once).
func BenchmarkCallerSession(b *testing.B) {
	p := oidcop.Start(b, oidcop.Client{ID: "toolnexus", Secret: "s0"}, oidcop.Client{ID: "alice", Secret: "s1"})
	_, url := startSessionLog(b)
	te := &tokenexchange.Config{TokenURL: p.TokenURL, ClientID: "toolnexus", ClientSecret: "s0", Audience: "https://sessions.test"}
	ctx := callerctx.With(context.Background(), caller{"alice", p.Token(b, "alice", "https://toolnexus.test", "")})
	for _, c := range []struct {
		name string
		cfg  ServerConfig
	}{
		{"shared", ServerConfig{Type: TypeRemote, URL: url, Timeout: 10000, Restart: Restart{}.withDefaults(),
			Headers: map[string]string{"Authorization": "Bearer " + p.Token(b, "toolnexus", "https://sessions.test", "")}}},
		{"caller", ServerConfig{Type: TypeRemote, URL: url, Timeout: 10000, Restart: Restart{}.withDefaults(), TokenExchange: te}},
	} {
		b.Run(c.name, func(b *testing.B) {
			src := New("up", c.cfg, sources.Env{Logger: slog.New(slog.DiscardHandler)})
			defer src.Close(context.Background())
			reg := registry.New()
			if err := src.Start(context.Background(), reg); err != nil {
				b.Fatal(err)
			}
			call := tool.Call{Arguments: json.RawMessage(`{}`)}
			if r := (testutil.Direct{Reg: reg}).Execute(ctx, "up_whoami", call); r.IsError { // warm: the exchange and the session
				b.Fatal(r.Output)
			}
			b.ReportAllocs()
			for b.Loop() {
				if r := (testutil.Direct{Reg: reg}).Execute(ctx, "up_whoami", call); r.IsError {
					b.Fatal(r.Output)
				}
			}
		})
	}
}
