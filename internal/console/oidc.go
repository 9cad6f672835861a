package console

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/toolnexus/toolnexus/internal/config"
)

// The OIDC login (server.web.oidc): authorization code with PKCE S256, a
// state bound to the browser by a cookie and kept server-side for one use,
// a nonce the ID token must carry, RFC 9207's iss checked when sent. The
// ID token is verified by go-oidc (signature with the issuer's published
// keys, issuer, audience = the console's client id, expiry); who the
// person is comes from the same claims, by the same auth.oidc rules, as
// for a JWT of that issuer on gRPC (principalClaim, groupsClaim, the
// auth.groups tools and admin right, policy.approvers by group).

// OIDCCallbackPath is where the provider sends the browser back: register
// <publicUrl>/login/oidc/callback as the console client's redirect URI.
const OIDCCallbackPath = "/login/oidc/callback"

// oidcFlowTTL is how long a login at the provider may take.
const oidcFlowTTL = 10 * time.Minute

const oidcFlowPrefix = "console/oidc/"

// oidcFlow is a login in progress, kept under the SHA-256 of its state.
type oidcFlow struct {
	Issuer   string `json:"issuer"`
	Nonce    string `json:"nonce"`
	Verifier string `json:"verifier"`
	Next     string `json:"next"`
}

// oidcClients caches each issuer's discovered provider (its endpoints and
// key set); a discovery that fails is tried again on the next login.
type oidcClients struct {
	hc        *http.Client
	mu        sync.Mutex
	providers map[string]*oidc.Provider
}

func newOIDCClients(hc *http.Client) *oidcClients {
	return &oidcClients{hc: hc, providers: map[string]*oidc.Provider{}}
}

func (o *oidcClients) ctx(ctx context.Context) context.Context { return oidc.ClientContext(ctx, o.hc) }

func (o *oidcClients) provider(ctx context.Context, issuer string) (*oidc.Provider, error) {
	o.mu.Lock()
	p := o.providers[issuer]
	o.mu.Unlock()
	if p != nil {
		return p, nil
	}
	// The provider keeps this context for fetching keys later: it must
	// outlive the request, and carries only the HTTP client.
	p, err := oidc.NewProvider(o.ctx(context.WithoutCancel(ctx)), issuer)
	if err != nil {
		return nil, err
	}
	o.mu.Lock()
	o.providers[issuer] = p
	o.mu.Unlock()
	return p, nil
}

// oauthConfig is the console's client at the provider.
func (c *Console) oauthConfig(cfg *config.Config, p *oidc.Provider) (*oauth2.Config, error) {
	o := cfg.Server.Web.OIDC
	secret, err := cfg.ConsoleSecret()
	if err != nil {
		return nil, err
	}
	return &oauth2.Config{ClientID: o.ClientID, ClientSecret: secret, Endpoint: p.Endpoint(),
		RedirectURL: c.baseURL() + OIDCCallbackPath, Scopes: o.Scopes}, nil
}

// loginOIDC starts a login at the provider.
func (c *Console) loginOIDC(w http.ResponseWriter, r *http.Request) {
	cfg := c.opts.Core.Config()
	o := cfg.Server.Web.OIDC
	if o == nil || c.opts.Core.Authenticator() == nil {
		c.refuse(w, http.StatusNotFound, "No such login", "This console has no OIDC login (server.web.oidc with auth.oidc).")
		return
	}
	ctx, cancel := timeout(r)
	defer cancel()
	p, err := c.oidc.provider(ctx, o.Issuer)
	if err != nil {
		c.log.Warn("console: the identity provider's discovery failed", "issuer", o.Issuer, "error", err)
		c.refuse(w, http.StatusBadGateway, "Login unavailable", fmt.Sprintf("The identity provider at %s cannot be reached right now; try again shortly, or log in with a token.", o.Issuer))
		return
	}
	oc, err := c.oauthConfig(cfg, p)
	if err != nil {
		c.log.Error("console: the OIDC client secret", "error", err)
		c.refuse(w, http.StatusInternalServerError, "Login unavailable", "The console's client secret cannot be read (the server logged which key).")
		return
	}
	state, f := randomToken(), oidcFlow{Issuer: o.Issuer, Nonce: randomToken(), Verifier: oauth2.GenerateVerifier(), Next: nextPath(r.URL.Query().Get("next"))}
	b, _ := json.Marshal(f)
	if err := c.opts.Store.Put(ctx, storeKey(oidcFlowPrefix, state), b, oidcFlowTTL); err != nil {
		c.log.Warn("console: a login could not be stored", "error", err)
		c.refuse(w, http.StatusServiceUnavailable, "Login unavailable", "The console's session store cannot be written right now; try again shortly.")
		return
	}
	http.SetCookie(w, c.cookie(c.named("toolnexus-oidc"), state, oidcFlowTTL))
	http.Redirect(w, r, oc.AuthCodeURL(state, oauth2.S256ChallengeOption(f.Verifier), oidc.Nonce(f.Nonce)), http.StatusFound)
}

// oidcCallback ends a login: it checks the answer, exchanges the code and
// verifies the ID token, then starts the session.
func (c *Console) oidcCallback(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Referrer-Policy", "no-referrer") // the URL holds a code and a state
	ctx, cancel := timeout(r)
	defer cancel()
	l, next, err := c.finishOIDC(ctx, r)
	http.SetCookie(w, c.cookie(c.named("toolnexus-oidc"), "", -1))
	if err != nil {
		c.log.Info("console: OIDC login refused", "reason", err.Error())
		c.refuse(w, http.StatusBadRequest, "Login failed", err.Error()+". Nothing was logged in: start again from the login page.")
		return
	}
	if err := c.startSession(ctx, w, r, l); err != nil {
		c.log.Warn("console: a session could not be stored", "error", err)
		c.refuse(w, http.StatusServiceUnavailable, "Login failed", "The console's session store cannot be written right now; try again shortly.")
		return
	}
	c.log.Info("console: logged in", "issuer", l.Issuer, "principal", l.Claims.Principal, "method", l.Method)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (c *Console) finishOIDC(ctx context.Context, r *http.Request) (login, string, error) {
	q := r.URL.Query()
	state := q.Get("state")
	ck, err := r.Cookie(c.named("toolnexus-oidc"))
	if state == "" || err != nil || subtle.ConstantTimeCompare([]byte(ck.Value), []byte(state)) != 1 {
		return login{}, "", errors.New("this login was not started in this browser, or it expired")
	}
	var f oidcFlow
	b, err := c.opts.Store.Take(ctx, storeKey(oidcFlowPrefix, state))
	if err != nil || json.Unmarshal(b, &f) != nil {
		return login{}, "", errors.New("this login is unknown, was already used, or has expired")
	}
	if e := q.Get("error"); e != "" {
		return login{}, "", fmt.Errorf("the identity provider refused the login (%s)", clip(printable(e), 80))
	}
	if q.Has("iss") && q.Get("iss") != f.Issuer {
		return login{}, "", fmt.Errorf("the answer names the issuer %q, not %q where the login was sent (RFC 9207)", clip(printable(q.Get("iss")), 200), f.Issuer)
	}
	l, err := c.exchange(ctx, f, q.Get("code"))
	return l, f.Next, err
}

// exchange redeems the code and reads the person from the ID token.
func (c *Console) exchange(ctx context.Context, f oidcFlow, code string) (login, error) {
	cfg := c.opts.Core.Config()
	if cfg.Server.Web.OIDC == nil || cfg.Server.Web.OIDC.Issuer != f.Issuer {
		return login{}, errors.New("the console's OIDC login changed while you were logging in")
	}
	p, err := c.oidc.provider(ctx, f.Issuer)
	if err != nil {
		return login{}, fmt.Errorf("the identity provider cannot be reached: %v", err)
	}
	oc, err := c.oauthConfig(cfg, p)
	if err != nil {
		return login{}, errors.New("the console's client secret cannot be read")
	}
	tok, err := oc.Exchange(c.oidc.ctx(ctx), code, oauth2.VerifierOption(f.Verifier))
	if err != nil {
		return login{}, errors.New("the identity provider did not accept the login's code")
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return login{}, errors.New("the identity provider sent no ID token (is \"openid\" in server.web.oidc.scopes?)")
	}
	idt, err := p.Verifier(&oidc.Config{ClientID: oc.ClientID}).Verify(c.oidc.ctx(ctx), raw)
	if err != nil {
		return login{}, fmt.Errorf("the ID token is not valid: %v", err)
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(f.Nonce)) != 1 {
		return login{}, errors.New("the ID token is not the one this login asked for (nonce)")
	}
	var claims map[string]json.RawMessage
	if err := idt.Claims(&claims); err != nil {
		return login{}, errors.New("the ID token's claims cannot be read")
	}
	au := c.opts.Core.Authenticator()
	pc, err := au.ClaimsOf(f.Issuer, claims)
	if err != nil {
		return login{}, err
	}
	if _, err := au.PersonPrincipal(f.Issuer, pc); err != nil {
		return login{}, err
	}
	return login{Method: methodOIDC, Issuer: f.Issuer, Claims: pc}, nil
}

// printable keeps the visible ASCII of a value a provider or a visitor
// sent.
func printable(s string) string {
	b := []byte(s)
	out := b[:0]
	for _, ch := range b {
		if ch >= 0x20 && ch < 0x7f {
			out = append(out, ch)
		}
	}
	return string(out)
}
