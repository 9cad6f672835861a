package oauthclient

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// ErrUnknownUpstream is a name no upstream with an oauth section has.
var ErrUnknownUpstream = errors.New("no upstream of this name has an oauth section")

// ErrNoConnection is a disconnect of a connection that does not exist.
var ErrNoConnection = errors.New("no such connection")

// Connect starts principal's login at the upstream name (`toolnexus
// connect`); listsTools (an admin's) makes the connection also the one the
// upstream's tools are listed with. Wait(flow.ID) says when it ends.
func (m *Manager) Connect(ctx context.Context, principal, name string, listsTools bool) (Flow, error) {
	u := m.upstream(name)
	if u == nil {
		return Flow{}, ErrUnknownUpstream
	}
	return u.startFlow(ctx, principal, listsTools)
}

// Wait blocks until the login of flowID ends: nil once connected, its
// failure otherwise, or ctx's error.
func (m *Manager) Wait(ctx context.Context, flowID string) error {
	for {
		var d doneRecord
		found, err := getJSON(ctx, m.v, doneKey(flowID), &d)
		if err != nil {
			return errStore(err)
		}
		if found {
			if d.Error != "" {
				return &Error{Reason: d.Error}
			}
			return nil
		}
		if err := m.waitChange(ctx, time.Second, doneKey(flowID)); err != nil {
			return err
		}
	}
}

// Connection describes a connection without its tokens.
type Connection struct {
	Principal string
	Upstream  string
	Scope     string
	// ExpiresAt is when the access token expires (zero: unknown).
	ExpiresAt   time.Time
	CreatedAt   time.Time
	RefreshedAt time.Time
	// Refreshable says the server gave a refresh token.
	Refreshable bool
	// ListsTools marks the connection the upstream's tools are listed with.
	ListsTools bool
}

// List is principal's connections, or every principal's when all (an
// admin), sorted by upstream then principal. No token leaves it.
func (m *Manager) List(ctx context.Context, principal string, all bool) ([]Connection, error) {
	keys, err := m.v.Keys(ctx, "conn/")
	if err != nil {
		return nil, errStore(err)
	}
	lists := map[string]string{}
	out := []Connection{}
	for _, k := range keys {
		up, p, ok := parseConnKey(k)
		if !ok || (!all && p != principal) {
			continue
		}
		var c connection
		if found, err := getJSON(ctx, m.v, k, &c); err != nil || !found {
			continue // gone meanwhile, or not openable: never fail the whole list
		}
		if _, ok := lists[up]; !ok {
			var r sourceRecord
			_, _ = getJSON(ctx, m.v, sourceKey(up), &r)
			lists[up] = r.Principal
		}
		out = append(out, Connection{Principal: p, Upstream: up, Scope: c.Scope, ExpiresAt: c.Expiry, CreatedAt: c.CreatedAt,
			RefreshedAt: c.RefreshedAt, Refreshable: c.RefreshToken != "", ListsTools: lists[up] == p})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Upstream != out[j].Upstream {
			return out[i].Upstream < out[j].Upstream
		}
		return out[i].Principal < out[j].Principal
	})
	return out, nil
}

// Disconnect forgets principal's connection to the upstream name and
// revokes its tokens where the authorization server supports it
// (RFC 7009); revoked says whether it did. The connection is forgotten
// even when the revocation fails.
func (m *Manager) Disconnect(ctx context.Context, principal, name string) (revoked bool, err error) {
	key := connKey(name, principal)
	var c connection
	found, err := getJSON(ctx, m.v, key, &c)
	if err != nil {
		return false, errStore(err)
	}
	if !found {
		return false, ErrNoConnection
	}
	if _, err := m.v.Delete(ctx, key); err != nil {
		return false, errStore(err)
	}
	var r sourceRecord
	if ok, _ := getJSON(ctx, m.v, sourceKey(name), &r); ok && r.Principal == principal {
		_, _ = m.v.Delete(ctx, sourceKey(name))
	}
	u := m.upstream(name)
	if u == nil {
		return false, nil
	}
	u.forget(principal)
	m.log.Info("OAuth connection removed", "upstream", name, "principal", principal)
	return u.revoke(ctx, c), nil
}

// revoke revokes the connection's tokens, refresh token first (which
// ends the grant at most servers); false when the server has no
// revocation endpoint or refused.
func (u *Upstream) revoke(ctx context.Context, c connection) bool {
	cl, err := u.clientFor(ctx, c.Issuer, c.ClientKey)
	if err != nil || cl.asm.RevocationEndpoint == "" {
		return false
	}
	ok := true
	for _, t := range []struct{ token, hint string }{{c.RefreshToken, "refresh_token"}, {c.AccessToken, "access_token"}} {
		if t.token == "" {
			continue
		}
		form := url.Values{"token": {t.token}, "token_type_hint": {t.hint}}
		if cl.style == oauth2.AuthStyleInParams || cl.secret == "" {
			form.Set("client_id", cl.id)
			if cl.secret != "" {
				form.Set("client_secret", cl.secret)
			}
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, cl.asm.RevocationEndpoint, strings.NewReader(form.Encode()))
		if err != nil {
			return false
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if cl.style != oauth2.AuthStyleInParams && cl.secret != "" {
			req.SetBasicAuth(url.QueryEscape(cl.id), url.QueryEscape(cl.secret))
		}
		resp, err := u.m.hc.Do(req)
		if err != nil {
			ok = false
			continue
		}
		resp.Body.Close()
		ok = ok && resp.StatusCode == http.StatusOK
	}
	return ok
}
