package oauthclient

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/sync/singleflight"

	"github.com/toolnexus/toolnexus/internal/vault"
)

// Upstream is one upstream with an oauth section (an MCP server), as its
// source uses it. It is safe for concurrent use.
type Upstream struct {
	m        *Manager
	name     string // the source's name: the MCP server's
	what     string // names it in texts: `MCP server "github"`
	resource string // the URL it serves at, the default RFC 8707 resource
	cfg      Config
	secret   string // cfg.ClientSecret, expanded by the source

	// tokens caches each caller's access token (principal → *cached):
	// the call path reads it without a lock; a refresh or a change in the
	// vault replaces or drops the entry.
	tokens  sync.Map
	refresh singleflight.Group

	discMu sync.Mutex
	disc   atomic.Pointer[discovery]

	// changes is poked when the upstream's source connection may have
	// changed (an admin connected or disconnected, on any replica).
	changes chan struct{}
}

// cached is one caller's access token and when to refresh it.
type cached struct {
	access    string
	refreshAt time.Time // zero: never (no expiry given)
}

// NewUpstream registers the upstream named name (what names it in texts,
// e.g. `MCP server "github"`) serving at resource; secret is
// cfg.ClientSecret expanded. Close unregisters it.
func (m *Manager) NewUpstream(name, what, resource string, cfg Config, secret string) *Upstream {
	u := &Upstream{m: m, name: name, what: what, resource: resource, cfg: cfg, secret: secret, changes: make(chan struct{}, 1)}
	m.register(u)
	return u
}

// Close unregisters the upstream (a reload that dropped it, shutdown).
func (u *Upstream) Close() { u.m.unregister(u) }

// Name is the upstream's name.
func (u *Upstream) Name() string { return u.name }

// Changes is poked when the connection the upstream's tools are listed
// with may have changed.
func (u *Upstream) Changes() <-chan struct{} { return u.changes }

func (u *Upstream) poke() {
	select {
	case u.changes <- struct{}{}:
	default:
	}
}

func (u *Upstream) forget(principal string) { u.tokens.Delete(principal) }

// Token is the principal's access token for the upstream: from memory
// while it is fresh (no lock, no allocation), else read from the vault
// and, near its expiry, refreshed — once per caller and upstream across
// every replica. A caller without a usable connection gets an error
// matching ErrNotConnected.
func (u *Upstream) Token(ctx context.Context, principal string) (string, error) {
	if c, ok := u.tokens.Load(principal); ok {
		c := c.(*cached)
		if c.refreshAt.IsZero() || time.Now().Before(c.refreshAt) {
			return c.access, nil
		}
	}
	v, err, _ := u.refresh.Do(principal, func() (any, error) { return u.load(context.WithoutCancel(ctx), principal) })
	if err != nil {
		return "", err
	}
	return v.(string), nil
}

// Refused tells the upstream that it refused the principal's token (an
// HTTP 401): the next Token reads the vault again and refreshes.
func (u *Upstream) Refused(principal, token string) {
	if c, ok := u.tokens.Load(principal); ok && c.(*cached).access == token {
		u.tokens.CompareAndDelete(principal, c)
		u.m.refusedMu.Lock()
		// keyed by connection; dropped when a refresh or login replaces it
		u.m.refused[connKey(u.name, principal)] = token
		u.m.refusedMu.Unlock()
	}
}

// refreshAhead is when to refresh a token that expires at expiry, having
// been issued at issued: a quarter of its lifetime before, at most a
// minute.
func refreshAhead(issued, expiry time.Time) time.Time {
	if expiry.IsZero() {
		return time.Time{}
	}
	ahead := min(time.Minute, expiry.Sub(issued)/4)
	return expiry.Add(-max(ahead, 0))
}

// load reads the principal's connection, refreshing it when due; it runs
// once at a time per principal in this process.
func (u *Upstream) load(ctx context.Context, principal string) (string, error) {
	key := connKey(u.name, principal)
	if _, tok, err := u.current(ctx, principal, key); err != nil || tok != "" {
		return tok, err
	}
	return u.refreshShared(ctx, principal, key)
}

// current reads the principal's connection: its token when it may be
// used as it is (remembered), else "" and the record to refresh.
func (u *Upstream) current(ctx context.Context, principal, key string) (connection, string, error) {
	var c connection
	found, err := getJSON(ctx, u.m.v, key, &c)
	if err != nil {
		return c, "", errStore(err)
	}
	if !found {
		return c, "", &Error{Reason: "not connected", NotConnected: true}
	}
	if u.fresh(c, key) {
		u.remember(principal, c)
		return c, c.AccessToken, nil
	}
	return c, "", nil
}

// fresh reports whether c's access token may be used as it is.
func (u *Upstream) fresh(c connection, key string) bool {
	u.m.refusedMu.Lock()
	refused := u.m.refused[key] == c.AccessToken
	u.m.refusedMu.Unlock()
	if refused {
		return false
	}
	at := refreshAhead(c.RefreshedAtOrCreated(), c.Expiry)
	return at.IsZero() || time.Now().Before(at)
}

func (u *Upstream) remember(principal string, c connection) {
	u.tokens.Store(principal, &cached{access: c.AccessToken, refreshAt: refreshAhead(c.RefreshedAtOrCreated(), c.Expiry)})
}

// RefreshedAtOrCreated is when the access token was issued.
func (c connection) RefreshedAtOrCreated() time.Time {
	if !c.RefreshedAt.IsZero() {
		return c.RefreshedAt
	}
	return c.CreatedAt
}

// refreshLockTTL bounds a refresh's hold on the cross-replica lock (a
// replica that died holding it releases it then).
const refreshLockTTL = 30 * time.Second

// refreshShared refreshes the connection under the vault's lock, so that
// of the replicas needing it at once, one asks the authorization server
// and the others read what it stored.
func (u *Upstream) refreshShared(ctx context.Context, principal, key string) (string, error) {
	deadline := time.Now().Add(refreshLockTTL)
	for {
		unlock, err := u.m.v.Lock(ctx, "refresh/"+key, refreshLockTTL)
		if err == nil {
			defer unlock()
			return u.refreshLocked(ctx, principal, key)
		}
		if !errors.Is(err, vault.ErrLocked) {
			return "", errStore(err)
		}
		// Another replica is refreshing: wait for its write.
		if time.Now().After(deadline) {
			return "", failf("%s: another replica has been refreshing this connection for %s; try again", u.what, refreshLockTTL)
		}
		_ = u.m.waitChange(ctx, 50*time.Millisecond, key)
		if _, tok, err := u.current(ctx, principal, key); tok != "" || errors.Is(err, ErrNotConnected) {
			return tok, err
		}
	}
}

// refreshLocked re-reads the connection (another replica may have just
// refreshed it) and refreshes it at the token endpoint if still due.
func (u *Upstream) refreshLocked(ctx context.Context, principal, key string) (string, error) {
	c, cur, err := u.current(ctx, principal, key)
	if err != nil || cur != "" {
		return cur, err
	}
	if c.RefreshToken == "" {
		if c.Expiry.IsZero() || time.Now().Before(c.Expiry) {
			// Refused by the upstream, and nothing to refresh with.
			return "", u.dropConnection(ctx, principal, key, "the upstream refused the connection's token and the authorization server gave no refresh token")
		}
		return "", u.dropConnection(ctx, principal, key, "the connection expired and the authorization server gave no refresh token")
	}
	cl, err := u.clientFor(ctx, c.Issuer, c.ClientKey)
	if err != nil {
		return u.stillValid(c, principal, err)
	}
	oc := cl.config(nil)
	tok, err := oc.TokenSource(u.m.clientContext(ctx), &oauth2.Token{RefreshToken: c.RefreshToken, Expiry: time.Unix(1, 0)}).Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && (re.ErrorCode == "invalid_grant" || re.ErrorCode == "invalid_client" || re.ErrorCode == "unauthorized_client") {
			return "", u.dropConnection(ctx, principal, key, tokenError("refresh", err).Reason)
		}
		return u.stillValid(c, principal, tokenError("refresh", err))
	}
	if err := checkToken(tok); err != nil {
		return u.stillValid(c, principal, err)
	}
	now := time.Now()
	c.AccessToken, c.Expiry, c.RefreshedAt = tok.AccessToken, tok.Expiry, now
	if tok.RefreshToken != "" {
		c.RefreshToken = tok.RefreshToken
	}
	if s, ok := tok.Extra("scope").(string); ok && s != "" {
		c.Scope = s
	}
	if err := putJSON(ctx, u.m.v, key, c, 0); err != nil {
		return "", errStore(err)
	}
	u.m.refreshes.Add(1)
	u.m.clearRefused(key)
	u.m.log.Debug("OAuth connection refreshed", "upstream", u.name, "principal", principal)
	u.remember(principal, c)
	return c.AccessToken, nil
}

// stillValid answers a refresh that failed for a passing reason: the old
// access token while it has not expired (it was only refreshed ahead),
// else the failure.
func (u *Upstream) stillValid(c connection, principal string, err error) (string, error) {
	u.m.refusedMu.Lock()
	refused := u.m.refused[connKey(u.name, principal)] == c.AccessToken
	u.m.refusedMu.Unlock()
	if !refused && !c.Expiry.IsZero() && time.Now().Before(c.Expiry) {
		return c.AccessToken, nil
	}
	return "", fmt.Errorf("%s: %w", u.what, err)
}

// dropConnection forgets a connection no refresh can save; the caller
// logs in again.
func (u *Upstream) dropConnection(ctx context.Context, principal, key, why string) error {
	if _, err := u.m.v.Delete(ctx, key); err != nil {
		return errStore(err)
	}
	u.forget(principal)
	u.m.log.Info("OAuth connection dropped; the caller must log in again", "upstream", u.name, "principal", principal, "reason", why)
	return &Error{Reason: why, NotConnected: true}
}

// checkToken refuses a token response toolnexus cannot use.
func checkToken(t *oauth2.Token) *Error {
	if t.AccessToken == "" {
		return failf("the authorization server's answer holds no access token")
	}
	if tt := t.Type(); tt != "Bearer" {
		return failf("the authorization server issued a %q token; only bearer tokens are supported", tt)
	}
	return nil
}

// SourcePrincipal is whose connection lists the upstream's tools (the
// admin who ran `toolnexus connect`), or "" when none was made.
func (u *Upstream) SourcePrincipal(ctx context.Context) (string, error) {
	var r sourceRecord
	found, err := getJSON(ctx, u.m.v, sourceKey(u.name), &r)
	if err != nil || !found {
		return "", errStore(err)
	}
	return r.Principal, nil
}

// SourceToken is the token of the connection that lists the upstream's
// tools; an error matching ErrNotConnected when there is none.
func (u *Upstream) SourceToken(ctx context.Context) (string, error) {
	p, err := u.SourcePrincipal(ctx)
	if err != nil {
		return "", err
	}
	if p == "" {
		return "", &Error{Reason: u.UnauthorizedText(), NotConnected: true}
	}
	return u.Token(ctx, p)
}

// UnauthorizedText is the status of an upstream whose tools cannot be
// listed yet, with the fix.
func (u *Upstream) UnauthorizedText() string {
	return fmt.Sprintf("%s needs an OAuth connection to list its tools: an admin runs `toolnexus connect %s` and logs in at the URL it prints", u.what, u.name)
}
