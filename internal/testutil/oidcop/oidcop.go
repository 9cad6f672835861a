// Package oidcop is a real OpenID provider for tests: zitadel/oidc's op
// package (the OpenID Foundation-certified provider library ZITADEL is
// built on) serving on 127.0.0.1, with an in-memory storage of this
// package's own. It issues JWT access tokens by client credentials — one
// client per test user, each with its own subject and groups — honours the
// RFC 8707 resource parameter as the audience, exchanges tokens (RFC 8693),
// publishes its keys at the discovered jwks_uri, and rotates its signing
// key on request while keeping the old keys published.
//
// It also serves the browser flow (browser.go, authcode.go): the
// authorization code with PKCE behind a login page that takes the user's
// name, rotating refresh tokens, revocation, RFC 7591 dynamic
// registration and the RFC 9207 iss parameter; Browser follows a login as
// a person's browser does.
//
// Tokens come from the provider's token endpoint over HTTP, as any client
// gets them. Tokens no real provider would issue (unsigned, HMAC with the
// public key, signed by an unpublished key, tampered, or with a chosen
// exp/nbf) are internal/testutil/idp's job.
package oidcop

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/toolnexus/toolnexus/internal/testutil"
)

// DefaultLifetime is how long the provider's access tokens live.
const DefaultLifetime = time.Hour

// Provider is the test's identity provider.
type Provider struct {
	// Issuer is the provider's URL and the "iss" of its tokens.
	Issuer string
	// TokenURL is its token endpoint (client credentials, token exchange).
	TokenURL string

	t       testing.TB
	addr    string
	store   *storage
	handler http.Handler

	http testutil.BackgroundHTTP

	knobs browserKnobs
}

// Start starts a provider with these clients on a fresh loopback port; it
// stops with the test.
func Start(t testing.TB, clients ...Client) *Provider {
	p := Reserve(t, clients...)
	p.Serve()
	return p
}

// Reserve makes a provider whose address is known but which does not
// answer until Serve: how a test shows an identity provider that is down.
func Reserve(t testing.TB, clients ...Client) *Provider {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	first, err := newRSAKey("rsa-1")
	if err != nil {
		t.Fatal(err)
	}
	st := &storage{lifetime: DefaultLifetime, clients: map[string]Client{}, keys: []key{first}}
	for _, c := range clients {
		st.clients[c.ID] = c
	}
	issuer := "http://" + addr
	st.issuer = issuer
	st.authRequests, st.codes, st.refreshes = map[string]*authRequest{}, map[string]string{}, map[string]*refreshRecord{}
	var cfg op.Config
	_, _ = rand.Read(cfg.CryptoKey[:])
	cfg.CodeMethodS256 = true // MCP clients refuse a provider that does not offer PKCE S256
	cfg.AuthMethodPost = true
	cfg.GrantTypeRefreshToken = true
	provider, err := op.NewProvider(&cfg, st, op.StaticIssuer(issuer), op.WithAllowInsecure()) // http: the issuer is on loopback
	if err != nil {
		t.Fatal(err)
	}
	p := &Provider{Issuer: issuer, TokenURL: issuer + op.DefaultEndpoints.Token.Relative(), t: t, addr: addr, store: st}
	p.handler = p.withBrowser(withResource(provider))
	t.Cleanup(p.Stop)
	return p
}

// withResource hands a client-credentials request's RFC 8707 "resource"
// values (or, without one, its "audience") to the storage — zitadel's
// client-credentials path does not pass them on — so a client asking for a
// token for /mcp gets one whose audience is /mcp.
func withResource(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.ParseForm() == nil && r.PostForm.Get("grant_type") == "client_credentials" {
			aud := r.PostForm["resource"]
			if len(aud) == 0 {
				aud = r.PostForm["audience"]
			}
			if len(aud) > 0 {
				r = r.WithContext(context.WithValue(r.Context(), resourceKey{}, aud))
			}
		}
		next.ServeHTTP(w, r)
	})
}

// Serve starts answering on the reserved address (again, after Stop).
func (p *Provider) Serve() {
	p.t.Helper()
	// The port was free a moment ago; another process may take it in
	// between, which is rare enough to fail the test on.
	l, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Fatalf("oidcop: listen %s again: %v", p.addr, err)
	}
	p.http.Serve(l, p.handler)
}

// Stop stops answering (idempotent); the keys and clients stay, so Serve
// brings the same provider back.
func (p *Provider) Stop() { p.http.Stop() }

// Rotate makes a new EC P-256 key the signing key and returns its id. The
// old keys stay published, so the tokens they signed stay valid until
// they expire.
func (p *Provider) Rotate() (kid string) {
	p.store.mu.Lock()
	defer p.store.mu.Unlock()
	kid = fmt.Sprintf("ec-%d", len(p.store.keys)+1)
	k, err := newECKey(kid)
	if err != nil {
		p.t.Fatal(err)
	}
	p.store.keys = append(p.store.keys, k)
	return kid
}

// SetLifetime sets how long the access tokens issued from now on live
// (DefaultLifetime at start): how a test shows a token valid until it
// expires, and no longer.
func (p *Provider) SetLifetime(d time.Duration) {
	p.store.mu.Lock()
	defer p.store.mu.Unlock()
	p.store.lifetime = d
}

// Exchanges returns the token exchanges granted so far.
func (p *Provider) Exchanges() []Exchange {
	p.store.mu.Lock()
	defer p.store.mu.Unlock()
	return append([]Exchange(nil), p.store.exchanges...)
}

// KeyFetches is how many times the JWKS was fetched.
func (p *Provider) KeyFetches() int {
	p.store.mu.Lock()
	defer p.store.mu.Unlock()
	return p.store.fetches
}

// Token gets an access token for the client by client credentials from
// the token endpoint, for resource (its audience; "" = the client id) with
// scope (space-separated; may be "").
func (p *Provider) Token(t testing.TB, clientID, resource, scope string) string {
	t.Helper()
	c, ok := p.store.client(clientID)
	if !ok {
		t.Fatalf("oidcop: no client %q", clientID)
	}
	form := url.Values{"grant_type": {"client_credentials"}}
	if resource != "" {
		form.Set("resource", resource)
	}
	if scope != "" {
		form.Set("scope", scope)
	}
	req, err := http.NewRequest(http.MethodPost, p.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(c.ID), url.QueryEscape(c.Secret))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("oidcop: token request: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var r struct {
		AccessToken string `json:"access_token"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &r) != nil || r.AccessToken == "" {
		t.Fatalf("oidcop: token request for %s: %s %s", clientID, resp.Status, body)
	}
	return r.AccessToken
}
