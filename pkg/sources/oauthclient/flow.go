package oauthclient

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"time"

	"golang.org/x/oauth2"

	"github.com/toolnexus/toolnexus/internal/web"
)

// Flow is a login started for a caller: the URL to open, and the id its
// outcome is kept under.
type Flow struct {
	ID        string
	URL       string
	ExpiresAt time.Time

	key string // the flow record's vault key
}

func randomText(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand does not fail on Linux
	return base64.RawURLEncoding.EncodeToString(b)
}

// startFlow begins a login of principal at the upstream: discovery, the
// client, then the authorization URL with PKCE S256, the RFC 8707
// resource and a state that only this flow's record (in the vault, by the
// state's hash, single use) knows. connect marks an admin's `toolnexus
// connect`.
func (u *Upstream) startFlow(ctx context.Context, principal string, connect bool) (Flow, error) {
	redirect := u.m.opts.RedirectURL()
	if redirect == "" {
		return Flow{}, failf("%s needs the web listener for the login's callback: start the server with --web-listen (server.web.listen)", u.what)
	}
	d, err := u.discover(ctx)
	if err != nil {
		return Flow{}, err
	}
	cl, err := u.resolveClient(ctx, d, redirect)
	if err != nil {
		return Flow{}, err
	}
	state, verifier := randomText(32), oauth2.GenerateVerifier()
	f := flowRecord{ID: "flow_" + randomText(16), Principal: principal, Upstream: u.name, Verifier: verifier, Issuer: d.asm.Issuer,
		ClientKey: cl.key, Redirect: redirect, Resource: d.resource, Scopes: d.scopes, Expires: time.Now().Add(u.m.opts.FlowTTL), Connect: connect}
	if err := putJSON(ctx, u.m.v, flowKey(state), f, u.m.opts.FlowTTL); err != nil {
		return Flow{}, errStore(err)
	}
	authURL := cl.config(d.scopes).AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", d.resource))
	return Flow{ID: f.ID, URL: authURL, ExpiresAt: f.Expires, key: flowKey(state)}, nil
}

// Callback is the handler of CallbackPath: the end of a login. The state
// must name a flow this deployment started and has not finished
// (forged, replayed and expired states all fail here, with nothing
// stored); the issuer must be the one the flow went to (RFC 9207); the
// code is exchanged with the flow's PKCE verifier. Only then is the
// connection stored. Every outcome is also recorded for whoever waits on
// the flow (the caller's retry, `toolnexus connect`).
func (m *Manager) Callback() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		state := q.Get("state")
		if state == "" {
			web.Page(w, http.StatusBadRequest, false, "Login failed", "The link has no state. Start the login again from your agent or with `toolnexus connect`.")
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
		defer cancel()
		var f flowRecord
		b, err := m.v.Take(ctx, flowKey(state))
		if err == nil {
			err = jsonUnmarshal(b, &f)
		}
		if err != nil || time.Now().After(f.Expires) {
			web.Page(w, http.StatusBadRequest, false, "Login failed",
				"This login link is unknown, was already used, or has expired: nothing was connected.",
				"Start again: call the tool again from your agent, or run `toolnexus connect NAME`.")
			return
		}
		c, ferr := m.finish(ctx, f, q.Get("code"), q.Get("iss"), q.Get("error"), q.Has("iss"))
		done := doneRecord{}
		if ferr != nil {
			done.Error = ferr.Error()
		}
		if err := putJSON(context.WithoutCancel(ctx), m.v, doneKey(f.ID), done, doneTTL); err != nil {
			m.log.Warn("OAuth login: its outcome could not be recorded", "upstream", f.Upstream, "principal", f.Principal, "error", err)
		}
		if ferr != nil {
			m.log.Info("OAuth login failed", "upstream", f.Upstream, "principal", f.Principal, "reason", ferr.Error())
			web.Page(w, http.StatusBadRequest, false, "Login failed", ferr.Error()+".", "Nothing was connected. Start again from your agent, or with `toolnexus connect "+f.Upstream+"`.")
			return
		}
		m.log.Info("OAuth connection made", "upstream", f.Upstream, "principal", f.Principal)
		web.Page(w, http.StatusOK, true, "Connected",
			"Your account at "+c.Upstream+" is now connected to toolnexus for the caller "+displayPrincipal(c.Principal)+".",
			"You can close this page and return to your agent.")
	})
}

func displayPrincipal(p string) string {
	if p == "" {
		return "(no authentication)"
	}
	return p
}

// finish checks the authorization response and exchanges its code; the
// connection it returns has been stored.
func (m *Manager) finish(ctx context.Context, f flowRecord, code, iss, asError string, hasIss bool) (connection, error) {
	u := m.upstream(f.Upstream)
	if u == nil {
		return connection{}, failf("the upstream %q is no longer configured", f.Upstream)
	}
	if asError != "" {
		if !tokenChars(asError) {
			asError = "an unreadable error"
		}
		return connection{}, failf("the authorization server refused the login (%s)", asError)
	}
	cl, err := u.clientFor(ctx, f.Issuer, f.ClientKey)
	if err != nil {
		return connection{}, err
	}
	// RFC 9207: a server that says it sends iss must send its own; one
	// that does not say so may still send it, and then it must match.
	if (cl.asm.AuthorizationResponseIssParameterSupported || hasIss) && iss != f.Issuer {
		return connection{}, failf("the login answer came from the issuer %q, not %q where the login was sent (RFC 9207 mix-up defence)", clip(iss), f.Issuer)
	}
	if code == "" {
		return connection{}, failf("the authorization server's answer holds no code")
	}
	cl.redirect = f.Redirect
	tok, err := cl.config(f.Scopes).Exchange(m.clientContext(ctx), code, oauth2.VerifierOption(f.Verifier), oauth2.SetAuthURLParam("resource", f.Resource))
	if err != nil {
		return connection{}, tokenError("authorization code", err)
	}
	if err := checkToken(tok); err != nil {
		return connection{}, err
	}
	now := time.Now()
	c := connection{Principal: f.Principal, Upstream: f.Upstream, AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken,
		Expiry: tok.Expiry, Issuer: f.Issuer, ClientKey: f.ClientKey, CreatedAt: now}
	if s, ok := tok.Extra("scope").(string); ok {
		c.Scope = s
	}
	key := connKey(f.Upstream, f.Principal)
	if err := putJSON(ctx, m.v, key, c, 0); err != nil {
		return connection{}, errStore(err)
	}
	m.clearRefused(key)
	if f.Connect {
		if err := putJSON(ctx, m.v, sourceKey(f.Upstream), sourceRecord{Principal: f.Principal}, 0); err != nil {
			return connection{}, errStore(err)
		}
	}
	return c, nil
}

// clientContext carries the manager's HTTP client to x/oauth2.
func (m *Manager) clientContext(ctx context.Context) context.Context {
	return context.WithValue(ctx, oauth2.HTTPClient, m.hc)
}

func clip(s string) string {
	if len(s) > 100 {
		return s[:100] + "…"
	}
	return s
}
