package oauthclient_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/cluster/clustertest"
	"github.com/toolnexus/toolnexus/internal/suspend/redisstore"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/vault"
	"github.com/toolnexus/toolnexus/internal/vault/redisvault"
	"github.com/toolnexus/toolnexus/pkg/sources/oauthclient"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// waitExpired waits until a token issued now with lifetime d is due for
// refresh (toolnexus refreshes a quarter of the lifetime ahead).
func waitExpired(d time.Duration) { time.Sleep(d + 100*time.Millisecond) }

// expiredConnection is a rig where alice has connected and her access
// token has expired.
func expiredConnection(t *testing.T) *rig {
	t.Helper()
	r := newRig(t, rigOpts{})
	r.op.SetLifetime(2 * time.Second)
	r.connect(t, "corp:alice", "alice")
	waitExpired(2 * time.Second)
	return r
}

// A connection whose access token expires is refreshed without a login:
// the caller's next call gets a new token for the same user.
func TestExpiredTokenRefreshedWithoutLogin(t *testing.T) {
	r := newRig(t, rigOpts{})
	r.op.SetLifetime(2 * time.Second)
	old := r.connect(t, "corp:alice", "alice")
	waitExpired(2 * time.Second)
	tok, res := r.forCall(t, call("corp:alice", `{}`))
	if tok == "" || tok == old {
		t.Fatalf("after expiry: %q %+v", tok, res)
	}
	if c := claims(t, tok); c["sub"] != "alice" {
		t.Fatalf("refreshed token is for %v", c["sub"])
	}
	if got := r.op.Counts(); got.Refreshes != 1 || got.Logins != 1 {
		t.Fatalf("provider counts %+v: want one refresh, no second login", got)
	}
}

// 100 calls at once with an expired token make one refresh.
func TestConcurrentCallsRefreshOnce(t *testing.T) {
	r := expiredConnection(t)
	r.op.SetLifetime(time.Hour)
	r.op.SetTokenDelay(50 * time.Millisecond) // so the calls overlap the refresh
	toks := make(chan string, 100)
	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() {
			tok, _ := r.forCall(t, call("corp:alice", `{}`))
			toks <- tok
		})
	}
	wg.Wait()
	close(toks)
	first := ""
	for tok := range toks {
		if tok == "" || (first != "" && tok != first) {
			t.Fatal("the calls did not all get the one refreshed token")
		}
		first = tok
	}
	if got := r.op.Counts().Refreshes; got != 1 {
		t.Fatalf("%d refreshes for 100 concurrent calls, want 1", got)
	}
}

// A refresh the server refuses (invalid_grant) drops the connection: the
// caller gets a PENDING authorization that says why.
func TestRefusedRefreshAsksForLogin(t *testing.T) {
	r := expiredConnection(t)
	r.op.SetTokenAnswer(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error": "invalid_grant", "error_description": "refresh token rt_secret revoked"}`))
	})
	_, res := r.forCall(t, call("corp:alice", `{}`))
	if res == nil || res.Pending == nil || !strings.Contains(res.Output, "your connection is gone") || !strings.Contains(res.Output, "invalid_grant") ||
		strings.Contains(res.Output, "rt_secret") {
		t.Fatalf("after a refused refresh: %+v", res)
	}
	nothingStored(t, r)
}

// Disconnect forgets the connection and revokes its refresh token at the
// provider (RFC 7009); the next call asks for a login.
func TestDisconnectRevokesAndForgets(t *testing.T) {
	r := newRig(t, rigOpts{})
	r.connect(t, "corp:alice", "alice")
	if n := r.op.LiveRefreshTokens(); n != 1 {
		t.Fatalf("%d refresh tokens live", n)
	}
	revoked, err := r.m.Disconnect(context.Background(), "corp:alice", "tickets")
	if err != nil || !revoked {
		t.Fatalf("Disconnect: %v %v", revoked, err)
	}
	if n := r.op.LiveRefreshTokens(); n != 0 {
		t.Fatalf("the provider still honours %d refresh tokens", n)
	}
	r.pendingFor(t, call("corp:alice", `{}`))
	if _, err := r.m.Disconnect(context.Background(), "corp:alice", "tickets"); err != oauthclient.ErrNoConnection {
		t.Fatalf("second Disconnect: %v", err)
	}
}

// An admin's connect: the URL, the login, Wait returns, and the
// connection is the one the upstream's tools are listed with.
func TestAdminConnect(t *testing.T) {
	r := newRig(t, rigOpts{})
	if _, err := r.up.SourceToken(context.Background()); err == nil || !strings.Contains(err.Error(), "toolnexus connect tickets") {
		t.Fatalf("before connect: %v", err)
	}
	f, err := r.m.Connect(context.Background(), "ops", "tickets", true)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- r.m.Wait(context.Background(), f.ID) }()
	if status, _ := r.browser.Login(t, f.URL, "ops-admin", nil); status != 200 {
		t.Fatalf("login: %d", status)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	tok, err := r.up.SourceToken(context.Background())
	if err != nil || claims(t, tok)["sub"] != "ops-admin" {
		t.Fatalf("source token: %v", err)
	}
	list, _ := r.m.List(context.Background(), "ops", false)
	if len(list) != 1 || !list[0].ListsTools || !list[0].Refreshable {
		t.Fatalf("list: %+v", list)
	}
	if _, err := r.m.Connect(context.Background(), "ops", "nope", true); err != oauthclient.ErrUnknownUpstream {
		t.Fatalf("unknown upstream: %v", err)
	}
}

// redisReplica is one replica's vault backend and suspended-call store on
// srv.
func redisReplica(t *testing.T, srv *testutil.RedisServer) (vault.Backend, *redisstore.Redis) {
	t.Helper()
	c := clustertest.Client(t, srv, "")
	b := redisvault.New(c)
	s, err := redisstore.New(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		b.Close()
		s.Close()
	})
	return b, s
}

// Two replicas on one Redis: a login that started on one completes
// through the other's callback, the answer lands on the first, and with
// an expired token 50 calls on each make one refresh between them.
func TestTwoReplicasShareConnectionsAndRefreshOnce(t *testing.T) {
	srv := testutil.StartRedis(t)
	keys := vault.RandomKeys()
	b1, s1 := redisReplica(t, srv)
	b2, s2 := redisReplica(t, srv)
	a := newRig(t, rigOpts{backend: b1, keys: keys, store: s1})
	b := newRig(t, rigOpts{backend: b2, keys: keys, store: s2, share: a})
	a.op.SetLifetime(2 * time.Second)

	c := call("corp:alice", `{}`)
	p := a.pendingFor(t, c)
	// The browser's callback reaches replica b (its redirect URI would be
	// the same behind a balancer; here b's own).
	cb := a.browser.CallbackOf(t, p.URL, "alice")
	cb.Host = strings.TrimPrefix(b.web.BaseURL(), "http://")
	if status, page := a.browser.Get(t, cb.String()); status != 200 {
		t.Fatalf("callback on the other replica: %d %s", status, page)
	}
	c.Answer = &tool.Answer{ID: p.ID, OK: true}
	if tok, res := b.forCall(t, c); tok == "" || claims(t, tok)["sub"] != "alice" {
		t.Fatalf("answer on replica b: %+v", res)
	}
	waitExpired(2 * time.Second)
	a.op.SetLifetime(time.Hour)
	a.op.SetTokenDelay(50 * time.Millisecond)
	var wg sync.WaitGroup
	for i := range 100 {
		r := a
		if i%2 == 1 {
			r = b
		}
		wg.Go(func() {
			if tok, res := r.forCall(t, call("corp:alice", `{}`)); tok == "" {
				t.Errorf("call: %+v", res)
			}
		})
	}
	wg.Wait()
	if got := a.op.Counts().Refreshes; got != 1 {
		t.Fatalf("%d refreshes across two replicas, want 1", got)
	}
}
