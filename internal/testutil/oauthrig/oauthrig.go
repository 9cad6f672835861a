// Package oauthrig is a deployment of toolnexus's OAuth client in one
// process, for tests: a real provider (internal/testutil/oidcop, with the
// browser flow), a real MCP server that checks its tokens' audience
// (internal/testutil/oauthmcp), the web listener serving the callback,
// and the manager over a vault. A second rig may share the first's
// provider and MCP server: a second replica.
package oauthrig

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/suspend"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/oauthmcp"
	"github.com/toolnexus/toolnexus/internal/testutil/oidcop"
	"github.com/toolnexus/toolnexus/internal/vault"
	"github.com/toolnexus/toolnexus/internal/web"
	"github.com/toolnexus/toolnexus/pkg/sources/oauthclient"
)

// Rig is the deployment.
type Rig struct {
	OP      *oidcop.Provider
	MCP     *oauthmcp.Server
	Web     *web.Server
	Manager *oauthclient.Manager
	Store   suspend.Store
	// Logs are the manager's log lines, at debug.
	Logs    *testutil.Buffer
	Browser *oidcop.Browser
}

// Options shape a rig; every field is optional.
type Options struct {
	// Backend and Keys make the vault (default: memory, a random key).
	Backend vault.Backend
	Keys    vault.Keys
	// Store keeps suspended calls (default: in memory).
	Store   suspend.Store
	FlowTTL time.Duration
	// Share is a rig whose provider and MCP server this one uses.
	Share *Rig
}

// Start starts the rig; everything stops with the test.
func Start(t testing.TB, o Options) *Rig {
	t.Helper()
	r := &Rig{Logs: &testutil.Buffer{}, Browser: oidcop.NewBrowser(), Store: o.Store}
	if o.Share != nil {
		r.OP, r.MCP = o.Share.OP, o.Share.MCP
	} else {
		r.OP = oidcop.Start(t)
		r.MCP = oauthmcp.Start(t, r.OP, "mcp:tools")
	}
	r.Web = web.New(web.Options{Addr: "127.0.0.1:0"})
	if err := r.Web.Listen(); err != nil {
		t.Fatal(err)
	}
	if o.Backend == nil {
		o.Backend = vault.NewMemory()
	}
	if o.Keys == nil {
		o.Keys = vault.RandomKeys()
	}
	v, err := vault.New(o.Backend, o.Keys)
	if err != nil {
		t.Fatal(err)
	}
	if r.Store == nil {
		r.Store = suspend.NewMemory(nil, 0)
	}
	log := slog.New(slog.NewTextHandler(r.Logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	r.Manager = oauthclient.New(oauthclient.Options{Vault: v, Suspended: r.Store, FlowTTL: o.FlowTTL, Logger: log,
		RedirectURL: func() string { return r.Web.URL(oauthclient.CallbackPath) }})
	r.Web.Handle("GET "+oauthclient.CallbackPath, r.Manager.Callback())
	r.Web.Serve(make(chan error, 1))
	t.Cleanup(func() {
		r.Web.Shutdown(context.Background())
		r.Manager.Close()
	})
	return r
}

// Connect is an admin's `toolnexus connect NAME` as principal, logged in
// at the provider as user: it returns once the login completed.
func (r *Rig) Connect(t testing.TB, principal, name, user string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f, err := r.Manager.Connect(ctx, principal, name, true)
	if err != nil {
		t.Fatal(err)
	}
	if status, page := r.Browser.Login(t, f.URL, user, nil); status != 200 {
		t.Fatalf("connect %s: callback %d %s", name, status, page)
	}
	if err := r.Manager.Wait(ctx, f.ID); err != nil {
		t.Fatal(err)
	}
}
