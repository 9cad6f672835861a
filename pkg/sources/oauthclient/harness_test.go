package oauthclient_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolnexus/toolnexus/internal/suspend"
	"github.com/toolnexus/toolnexus/internal/suspend/pending"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/oauthmcp"
	"github.com/toolnexus/toolnexus/internal/testutil/oauthrig"
	"github.com/toolnexus/toolnexus/internal/testutil/oidcop"
	"github.com/toolnexus/toolnexus/internal/vault"
	"github.com/toolnexus/toolnexus/internal/web"
	"github.com/toolnexus/toolnexus/pkg/sources/oauthclient"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// rig is the shared rig (internal/testutil/oauthrig) with an upstream
// "tickets" for its MCP server.
type rig struct {
	*oauthrig.Rig
	op      *oidcop.Provider
	mcp     *oauthmcp.Server
	web     *web.Server
	m       *oauthclient.Manager
	up      *oauthclient.Upstream
	store   suspend.Store
	logs    *testutil.Buffer
	browser *oidcop.Browser
	limits  pending.Limits
}

type rigOpts struct {
	backend vault.Backend
	keys    vault.Keys
	cfg     oauthclient.Config
	flowTTL time.Duration
	share   *rig
	store   suspend.Store
}

func newRig(t *testing.T, o rigOpts) *rig {
	t.Helper()
	ro := oauthrig.Options{Backend: o.backend, Keys: o.keys, Store: o.store, FlowTTL: o.flowTTL}
	if o.share != nil {
		ro.Share = o.share.Rig
	}
	x := oauthrig.Start(t, ro)
	r := &rig{Rig: x, op: x.OP, mcp: x.MCP, web: x.Web, m: x.Manager, store: x.Store, logs: x.Logs, browser: x.Browser,
		limits: pending.Limits{Timeout: time.Minute, MaxPerPrincipal: 10}}
	r.up = r.m.NewUpstream("tickets", `MCP server "tickets"`, r.mcp.URL, o.cfg, o.cfg.ClientSecret)
	t.Cleanup(r.up.Close)
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
