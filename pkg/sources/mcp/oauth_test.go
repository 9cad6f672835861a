package mcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/callerctx"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/oauthmcp"
	"github.com/toolnexus/toolnexus/internal/testutil/oauthrig"
	"github.com/toolnexus/toolnexus/pkg/feature"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/mcp"
	"github.com/toolnexus/toolnexus/pkg/sources/oauthclient"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// principal is a caller in a call's context, as the front-ends put it.
type principal string

func (p principal) String() string { return string(p) }

// callAs runs name as who (owner and context), with answer when set.
func callAs(reg *registry.Registry, who, name, args string, answer *tool.Answer) tool.Result {
	ctx := callerctx.With(context.Background(), principal(who))
	return testutil.Direct{Reg: reg}.Execute(ctx, name, tool.Call{Arguments: json.RawMessage(args), Answer: answer,
		Owner: tool.Owner{Principal: who, Session: "s"}})
}

// startOAuth starts an MCP source with "oauth" for the rig's MCP server.
func startOAuth(t testing.TB, r *oauthrig.Rig) (*registry.Registry, *registry.Watcher, sources.Source) {
	t.Helper()
	cfg := remoteConfig(r.MCP.URL)
	cfg.OAuth = &oauthclient.Config{}
	env := testEnv
	env.OAuth = r.Manager
	reg := registry.New()
	w, _ := reg.Watch()
	t.Cleanup(w.Close)
	src := mcp.New("tickets", cfg, env)
	t.Cleanup(func() { _ = src.Close(context.Background()) })
	if err := src.Start(context.Background(), reg); err != nil {
		t.Fatalf("Start: %v", err)
	}
	return reg, w, src
}

// connectedOAuth is startOAuth once an admin (ops, as ops-admin) has
// connected the server and its tools are listed.
func connectedOAuth(t testing.TB, r *oauthrig.Rig) (*registry.Registry, sources.Source) {
	t.Helper()
	reg, w, src := startOAuth(t, r)
	r.Connect(t, "ops", "tickets", "ops-admin")
	waitFor(t, w, "the tools", func(s *registry.Snapshot) bool { _, ok := s.Lookup("tickets_whoami"); return ok })
	return reg, src
}

// loginAs takes who from its PENDING authorization through the browser
// (as user) to the resumed call, which must act as user.
func loginAs(t testing.TB, r *oauthrig.Rig, reg *registry.Registry, who, user string) {
	t.Helper()
	res := callAs(reg, who, "tickets_whoami", `{}`, nil)
	if res.Outcome != tool.OutcomePending || res.Pending == nil || res.Pending.Kind != "authorization" {
		t.Fatalf("%s without a connection: %+v", who, res)
	}
	if status, page := r.Browser.Login(t, res.Pending.URL, user, nil); status != 200 {
		t.Fatalf("%s login: %d %s", who, status, page)
	}
	if got := callAs(reg, who, "tickets_whoami", `{}`, &tool.Answer{ID: res.Pending.ID, OK: true}); got.IsError || got.Output != "you are "+user {
		t.Fatalf("%s's resumed call: %+v", who, got)
	}
}

// An MCP server with "oauth" is unauthorized until an admin connects it,
// then lists its tools with that connection; each caller then connects
// its own account (PENDING → login → answer) and its calls act as itself,
// never as the admin or another caller.
func TestOAuthServerActsAsEachCaller(t *testing.T) {
	r := oauthrig.Start(t, oauthrig.Options{})
	reg, w, src := startOAuth(t, r)
	if st := src.Status(); st.State != sources.Unauthorized || !strings.Contains(st.Error, "toolnexus connect tickets") {
		t.Fatalf("before connect: %+v", st)
	}
	if len(reg.Snapshot().Entries()) != 0 {
		t.Fatal("tools listed without a connection")
	}
	r.Connect(t, "ops", "tickets", "ops-admin")
	waitFor(t, w, "the tools after connect", func(s *registry.Snapshot) bool { _, ok := s.Lookup("tickets_whoami"); return ok })
	deadline := time.Now().Add(waitTimeout) // the status follows the tools' publication
	for src.Status().State != sources.Connected {
		if time.Now().After(deadline) {
			t.Fatalf("after connect: %+v", src.Status())
		}
		time.Sleep(5 * time.Millisecond)
	}

	for _, who := range []string{"alice", "bob"} {
		loginAs(t, r, reg, "corp:"+who, who)
	}
	// Later calls run at once, each as its own caller.
	for range 3 {
		for _, who := range []string{"alice", "bob"} {
			if got := callAs(reg, "corp:"+who, "tickets_whoami", `{}`, nil); got.Output != "you are "+who {
				t.Fatalf("%s: %+v", who, got)
			}
		}
	}
	if r.MCP.Calls("alice") != 4 || r.MCP.Calls("bob") != 4 || r.MCP.Calls("ops-admin") != 0 {
		t.Fatalf("calls per subject: alice %d, bob %d, admin %d", r.MCP.Calls("alice"), r.MCP.Calls("bob"), r.MCP.Calls("ops-admin"))
	}
	// Mallory has no connection of her own and cannot borrow one.
	if res := callAs(reg, "corp:mallory", "tickets_whoami", `{}`, nil); res.Outcome != tool.OutcomePending {
		t.Fatalf("mallory: %+v", res)
	}
}

// A caller whose connection is gone (disconnected) is asked to log in
// again; the admin disconnecting the listing connection makes the source
// unauthorized again once its session is renewed.
func TestOAuthDisconnectAsksAgain(t *testing.T) {
	r := oauthrig.Start(t, oauthrig.Options{})
	reg, _ := connectedOAuth(t, r)
	if got := callAs(reg, "ops", "tickets_whoami", `{}`, nil); got.Output != "you are ops-admin" {
		t.Fatalf("the admin's own call: %+v", got)
	}
	if _, err := r.Manager.Disconnect(context.Background(), "ops", "tickets"); err != nil {
		t.Fatal(err)
	}
	if res := callAs(reg, "ops", "tickets_whoami", `{}`, nil); res.Outcome != tool.OutcomePending {
		t.Fatalf("after disconnect: %+v", res)
	}
}

// A token the server refuses (401) although it has not expired is
// refreshed and the request sent once more: the caller never sees it.
func TestOAuthRefusedTokenRenewedOnce(t *testing.T) {
	r := oauthrig.Start(t, oauthrig.Options{})
	reg, _ := connectedOAuth(t, r)
	loginAs(t, r, reg, "corp:alice", "alice")
	toks := r.MCP.Tokens()
	r.MCP.Revoke(toks[len(toks)-1])
	refreshes := r.OP.Counts().Refreshes
	if got := callAs(reg, "corp:alice", "tickets_whoami", `{}`, nil); got.Output != "you are alice" {
		t.Fatalf("after the server refused her token: %+v", got)
	}
	if n := r.OP.Counts().Refreshes - refreshes; n != 1 || r.MCP.Refused() == 0 {
		t.Fatalf("%d refreshes (want 1), %d refusals", n, r.MCP.Refused())
	}
}

// A resource read (as a prompt or a completion) of an "oauth" server goes
// out as the caller too: on its own session, with its own token. A caller
// not connected yet is told how to connect, and is never served with the
// admin's or another caller's account.
func TestOAuthFeatureRequestsActAsEachCaller(t *testing.T) {
	r := oauthrig.Start(t, oauthrig.Options{})
	reg, src := connectedOAuth(t, r)
	loginAs(t, r, reg, "corp:alice", "alice")
	read := func(who string) (string, error) {
		got, err := src.(feature.Server).Read(callerctx.With(context.Background(), principal(who)), oauthmcp.WhoamiURI)
		if err != nil {
			return "", err
		}
		if len(got) != 1 {
			t.Fatalf("%s's read: %+v", who, got)
		}
		part, err := got[0].Decoded()
		return part.Text, err
	}
	for who, want := range map[string]string{"corp:alice": "you are alice", "ops": "you are ops-admin"} {
		if got, err := read(who); err != nil || got != want {
			t.Fatalf("%s's read: %q, %v (want %q)", who, got, err, want)
		}
	}
	got, err := read("corp:mallory")
	if err == nil || feature.KindOf(err) != feature.Unavailable || !strings.Contains(err.Error(), "toolnexus connect tickets") {
		t.Fatalf("mallory, not connected: %q, %v", got, err)
	}
}
