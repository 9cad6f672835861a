package oauthclient_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolnexus/toolnexus/internal/oauthclient"
	"github.com/toolnexus/toolnexus/internal/suspend"
	"github.com/toolnexus/toolnexus/internal/suspend/pending"
	"github.com/toolnexus/toolnexus/internal/testutil/oauthmcp"
	"github.com/toolnexus/toolnexus/internal/testutil/oidcop"
	"github.com/toolnexus/toolnexus/internal/vault"
	"github.com/toolnexus/toolnexus/internal/web"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// syncBuffer is a log sink tests read while servers write.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// rig is a deployment in one process: a real provider (zitadel's OP with
// the browser flow), a real MCP server that checks its tokens' audience,
// the web listener serving the callback, and the manager over a vault.
type rig struct {
	op      *oidcop.Provider
	mcp     *oauthmcp.Server
	web     *web.Server
	m       *oauthclient.Manager
	up      *oauthclient.Upstream
	store   suspend.Store
	logs    *syncBuffer
	browser *oidcop.Browser
	limits  pending.Limits
}

type rigOpts struct {
	backend vault.Backend
	keys    vault.Keys
	cfg     oauthclient.Config
	flowTTL time.Duration
	// share, when set, is a rig whose provider and MCP server this one
	// uses (a second replica).
	share *rig
	store suspend.Store
}

func newRig(t *testing.T, o rigOpts) *rig {
	t.Helper()
	r := &rig{logs: &syncBuffer{}, browser: oidcop.NewBrowser(), limits: pending.Limits{Timeout: time.Minute, MaxPerPrincipal: 10}}
	if o.share != nil {
		r.op, r.mcp = o.share.op, o.share.mcp
	} else {
		r.op = oidcop.Start(t)
		r.mcp = oauthmcp.Start(t, r.op, "mcp:tools")
	}
	r.web = web.New(web.Options{Addr: "127.0.0.1:0"})
	if err := r.web.Listen(); err != nil {
		t.Fatal(err)
	}
	if o.backend == nil {
		o.backend = vault.NewMemory()
	}
	if o.keys == nil {
		o.keys = vault.RandomKeys()
	}
	v, err := vault.New(o.backend, o.keys)
	if err != nil {
		t.Fatal(err)
	}
	r.store = o.store
	if r.store == nil {
		r.store = suspend.NewMemory(nil, 0)
	}
	log := slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	r.m = oauthclient.New(oauthclient.Options{Vault: v, Suspended: r.store, FlowTTL: o.flowTTL, Logger: log,
		RedirectURL: func() string { return r.web.URL(oauthclient.CallbackPath) }})
	r.web.Handle("GET "+oauthclient.CallbackPath, r.m.Callback())
	r.web.Serve(make(chan error, 1))
	r.up, err = r.m.NewUpstream("tickets", `MCP server "tickets"`, r.mcp.URL, o.cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		r.up.Close()
		r.web.Shutdown(context.Background())
		r.m.Close()
	})
	return r
}

func call(principal, args string) tool.Call {
	return tool.Call{Name: "tickets_whoami", Arguments: json.RawMessage(args), Owner: tool.Owner{Principal: principal, Session: "s1"}}
}

// forCall runs the call's token step with a deadline.
func (r *rig) forCall(t *testing.T, c tool.Call) (string, *tool.Result) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return r.up.ForCall(ctx, c, r.limits)
}

// pendingFor is the PENDING authorization a caller without a connection
// gets.
func (r *rig) pendingFor(t *testing.T, c tool.Call) *tool.Pending {
	t.Helper()
	tok, res := r.forCall(t, c)
	if tok != "" || res == nil || res.Outcome != tool.OutcomePending || res.Pending == nil || res.Pending.Kind != "authorization" {
		t.Fatalf("want a PENDING authorization, got token %q result %+v", tok, res)
	}
	if !strings.Contains(res.Output, res.Pending.URL) || !strings.Contains(res.Output, res.Pending.ID) {
		t.Fatalf("the PENDING text does not show the URL and the id: %s", res.Output)
	}
	return res.Pending
}

// connect takes principal through the whole login: PENDING, the browser
// logs in as user, the retry answers and gets the token.
func (r *rig) connect(t *testing.T, principal, user string) string {
	t.Helper()
	c := call(principal, `{}`)
	p := r.pendingFor(t, c)
	if status, page := r.browser.Login(t, p.URL, user, nil); status != 200 || !strings.Contains(page, "Connected") {
		t.Fatalf("callback page: %d %s", status, page)
	}
	c.Answer = &tool.Answer{ID: p.ID, OK: true}
	tok, res := r.forCall(t, c)
	if tok == "" {
		t.Fatalf("after the login: %+v", res)
	}
	return tok
}

func claims(t *testing.T, tok string) map[string]any { return oidcop.MustClaims(t, tok) }
