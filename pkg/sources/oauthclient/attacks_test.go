package oauthclient_test

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/pkg/sources/oauthclient"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// nothingStored says no connection exists for anyone.
func nothingStored(t *testing.T, r *rig) {
	t.Helper()
	list, err := r.m.List(context.Background(), "", true)
	if err != nil || len(list) != 0 {
		t.Fatalf("connections stored: %+v %v", list, err)
	}
}

// A browser arriving with a state no login started, with a login's
// callback a second time, or after the login expired, gets an error page
// and nothing is stored.
func TestForgedReplayedAndExpiredStatesRefused(t *testing.T) {
	r := newRig(t, rigOpts{})
	status, page := r.browser.Get(t, r.web.URL(oauthclient.CallbackPath+"?state=forged-state&code=anything"))
	if status != http.StatusBadRequest || !strings.Contains(page, "unknown, was already used, or has expired") {
		t.Fatalf("forged state: %d %s", status, page)
	}
	status, page = r.browser.Get(t, r.web.URL(oauthclient.CallbackPath+"?code=anything"))
	if status != http.StatusBadRequest || !strings.Contains(page, "no state") {
		t.Fatalf("no state: %d %s", status, page)
	}
	nothingStored(t, r)

	p := r.pendingFor(t, call("corp:alice", `{}`))
	cb := r.browser.CallbackOf(t, p.URL, "alice")
	if status, page := r.browser.Get(t, cb.String()); status != http.StatusOK {
		t.Fatalf("first use: %d %s", status, page)
	}
	if _, err := r.m.Disconnect(context.Background(), "corp:alice", "tickets"); err != nil {
		t.Fatal(err)
	}
	status, page = r.browser.Get(t, cb.String())
	if status != http.StatusBadRequest || !strings.Contains(page, "already used") {
		t.Fatalf("replayed callback: %d %s", status, page)
	}
	nothingStored(t, r)

	short := newRig(t, rigOpts{flowTTL: 300 * time.Millisecond})
	p = short.pendingFor(t, call("corp:alice", `{}`))
	time.Sleep(500 * time.Millisecond)
	status, page = short.browser.Login(t, p.URL, "alice", nil)
	if status != http.StatusBadRequest || !strings.Contains(page, "expired") {
		t.Fatalf("expired login: %d %s", status, page)
	}
	nothingStored(t, short)
}

// RFC 9207: an authorization response naming another issuer is refused
// (mix-up), the caller's retry says why and offers a new login, and the
// same for an authorization server's error.
func TestIssuerMismatchAndServerErrorRefused(t *testing.T) {
	r := newRig(t, rigOpts{})
	c := call("corp:alice", `{}`)
	p := r.pendingFor(t, c)
	r.op.SetIssParam("https://evil.example")
	status, page := r.browser.Login(t, p.URL, "alice", nil)
	if status != http.StatusBadRequest || !strings.Contains(page, "https://evil.example") || !strings.Contains(page, "mix-up") {
		t.Fatalf("wrong iss: %d %s", status, page)
	}
	nothingStored(t, r)
	c.Answer = &tool.Answer{ID: p.ID, OK: true}
	_, res := r.forCall(t, c)
	if res == nil || res.Pending == nil || !strings.Contains(res.Output, "the last login failed") || !strings.Contains(res.Output, "evil.example") || res.Pending.ID == p.ID {
		t.Fatalf("the retry after a refused login: %+v", res)
	}
	r.op.SetIssParam("")

	p = r.pendingFor(t, call("corp:alice", `{"n": 2}`))
	status, page = r.browser.Login(t, p.URL, "alice", func(u *url.URL) {
		q := u.Query()
		q.Del("code")
		q.Set("error", "access_denied")
		u.RawQuery = q.Encode()
	})
	if status != http.StatusBadRequest || !strings.Contains(page, "refused the login (access_denied)") {
		t.Fatalf("server error: %d %s", status, page)
	}
	nothingStored(t, r)
}

// A token endpoint that answers garbage, or megabytes, fails the login
// with a clear error, quickly, and nothing is stored.
func TestTokenEndpointGarbageAndMegabytesRefused(t *testing.T) {
	r := newRig(t, rigOpts{})
	for name, answer := range map[string]http.HandlerFunc{
		"garbage": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte("<html>this is not a token</html>"))
		},
		"megabytes": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"access_token": "`))
			chunk := []byte(strings.Repeat("A", 1<<20))
			for range 8 {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		},
		"no token": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"token_type": "Bearer"}`))
		},
	} {
		t.Run(name, func(t *testing.T) {
			p := r.pendingFor(t, call("corp:alice", `{"case": "`+name+`"}`))
			r.op.SetTokenAnswer(answer)
			defer r.op.SetTokenAnswer(nil)
			start := time.Now()
			status, page := r.browser.Login(t, p.URL, "alice", nil)
			if status != http.StatusBadRequest || !strings.Contains(page, "not a token response") && !strings.Contains(page, "no access token") {
				t.Fatalf("%d %s", status, page)
			}
			if time.Since(start) > 5*time.Second {
				t.Fatalf("took %s", time.Since(start))
			}
			nothingStored(t, r)
		})
	}
}

// An upstream whose challenge names metadata on plain HTTP beyond
// loopback is refused before anything is fetched: the caller's result
// says so.
func TestMetadataOnPlainHTTPRefused(t *testing.T) {
	r := newRig(t, rigOpts{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://metadata.example.com/.well-known/oauth-protected-resource"`)
		w.WriteHeader(http.StatusUnauthorized)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	up := r.m.NewUpstream("plain", `MCP server "plain"`, "http://"+l.Addr().String()+"/mcp", oauthclient.Config{}, "")
	defer up.Close()
	_, res := up.ForCall(context.Background(), call("corp:alice", `{}`), r.limits)
	if res == nil || res.Outcome == tool.OutcomePending || !strings.Contains(res.Output, "http://metadata.example.com") || !strings.Contains(res.Output, "HTTPS") {
		t.Fatalf("plain-HTTP metadata: %+v", res)
	}
}

// The secrets of a login never reach a log line (at debug), a result, or
// the callback page: not the access or refresh token, not the code, not
// the PKCE verifier's state.
func TestTokensNeverInLogsOrResults(t *testing.T) {
	r := newRig(t, rigOpts{})
	c := call("corp:alice", `{}`)
	p := r.pendingFor(t, c)
	cb := r.browser.CallbackOf(t, p.URL, "alice")
	_, page := r.browser.Get(t, cb.String())
	c.Answer = &tool.Answer{ID: p.ID, OK: true}
	tok, _ := r.forCall(t, c)
	if tok == "" {
		t.Fatal("no token")
	}
	secrets := append([]string{tok, cb.Query().Get("code"), cb.Query().Get("state")}, r.op.RefreshTokens()...)
	_, _ = r.m.Disconnect(context.Background(), "corp:alice", "tickets")
	_, res := r.forCall(t, call("corp:alice", `{}`))
	list, _ := r.m.List(context.Background(), "", true)
	for _, s := range secrets {
		if s == "" {
			t.Fatal("a secret to look for is empty")
		}
		for where, text := range map[string]string{"logs": r.logs.String(), "callback page": page, "result": res.Output} {
			if strings.Contains(text, s) {
				t.Errorf("%s shows a secret", where)
			}
		}
	}
	if len(list) != 0 || !strings.Contains(r.logs.String(), "OAuth connection made") {
		t.Fatalf("the test saw no flow: %v\n%s", list, r.logs.String())
	}
}
