package oauthclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// discovery is what the upstream and its authorization server publish
// about themselves, found once and kept for discoveryTTL.
type discovery struct {
	resource string   // the RFC 8707 resource: the metadata's "resource", else the upstream's URL
	scopes   []string // the upstream's challenge scope, else its scopes_supported
	asm      *oauthex.AuthServerMeta
	at       time.Time
}

const discoveryTTL = time.Hour

// discover finds the authorization server as the MCP authorization spec
// says: the upstream's 401 WWW-Authenticate names its protected resource
// metadata (resource_metadata), else the RFC 9728 well-known URLs of the
// upstream are tried; the metadata names the authorization server, whose
// RFC 8414 or OpenID discovery document gives its endpoints. Every
// document must be on https (or loopback), come from where it claims, and
// the server must offer PKCE S256.
func (u *Upstream) discover(ctx context.Context) (*discovery, error) {
	if d := u.disc.Load(); d != nil && time.Since(d.at) < discoveryTTL {
		return d, nil
	}
	u.discMu.Lock()
	defer u.discMu.Unlock()
	if d := u.disc.Load(); d != nil && time.Since(d.at) < discoveryTTL {
		return d, nil
	}
	challenge, scope := u.probe(ctx)
	prm, err := u.resourceMetadata(ctx, challenge)
	if err != nil {
		return nil, err
	}
	if len(prm.AuthorizationServers) == 0 {
		return nil, failf("%s: its protected resource metadata names no authorization server", u.what)
	}
	issuer := prm.AuthorizationServers[0]
	asm, err := sdkauth.GetAuthServerMetadata(ctx, issuer, u.m.hc)
	if err != nil {
		return nil, failf("%s: the authorization server's metadata (%s) cannot be used: %v", u.what, issuer, discoveryReason(err))
	}
	if asm == nil {
		return nil, failf("%s: the authorization server %s publishes no RFC 8414 or OpenID discovery metadata", u.what, issuer)
	}
	if !slices.Contains(asm.CodeChallengeMethodsSupported, "S256") {
		return nil, failf("%s: the authorization server %s does not offer PKCE with S256, which OAuth 2.1 requires", u.what, issuer)
	}
	d := &discovery{resource: prm.Resource, asm: asm, at: time.Now()}
	switch {
	case len(u.cfg.Scopes) > 0:
		d.scopes = u.cfg.Scopes
	case scope != "":
		d.scopes = strings.Fields(scope)
	default:
		d.scopes = prm.ScopesSupported
	}
	if slices.Contains(asm.ScopesSupported, "offline_access") && !slices.Contains(d.scopes, "offline_access") {
		d.scopes = append(slices.Clip(d.scopes), "offline_access") // a refresh token (SEP-2207)
	}
	u.disc.Store(d)
	return d, nil
}

// discoveryReason is a discovery error without the Go plumbing around it.
func discoveryReason(err error) string {
	s := err.Error()
	s = strings.TrimPrefix(s, "metadataURL: ")
	return s
}

// probe asks the upstream without a token, as the spec's discovery
// starts: a 401 names the metadata URL and the scope to ask for.
func (u *Upstream) probe(ctx context.Context) (metadataURL, scope string) {
	body := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"toolnexus","version":"1"}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.resource, bytes.NewReader([]byte(body)))
	if err != nil {
		return "", ""
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := u.m.hc.Do(req)
	if err != nil {
		return "", ""
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusUnauthorized {
		return "", ""
	}
	cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil {
		return "", ""
	}
	for _, c := range cs {
		if c.Scheme == "bearer" {
			return c.Params["resource_metadata"], c.Params["scope"]
		}
	}
	return "", ""
}

// resourceMetadata fetches the upstream's RFC 9728 metadata: from the URL
// its challenge named, else the well-known URL for its path, else the
// one at its root. Without any, the upstream's origin is taken as its
// authorization server (the 2025-03-26 fallback).
func (u *Upstream) resourceMetadata(ctx context.Context, challenge string) (*oauthex.ProtectedResourceMetadata, error) {
	ru, err := url.Parse(u.resource)
	if err != nil {
		return nil, failf("%s: its URL %q does not parse", u.what, u.resource)
	}
	type candidate struct{ url, resource string }
	var tries []candidate
	if challenge != "" {
		tries = append(tries, candidate{challenge, u.resource})
	}
	wk := *ru
	wk.RawQuery, wk.Fragment = "", ""
	wk.Path = "/.well-known/oauth-protected-resource/" + strings.TrimLeft(ru.Path, "/")
	tries = append(tries, candidate{wk.String(), u.resource})
	root := *ru
	root.Path, root.RawQuery, root.Fragment = "", "", ""
	wk.Path = "/.well-known/oauth-protected-resource"
	tries = append(tries, candidate{wk.String(), root.String()})
	var firstErr error
	for i, c := range tries {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, c.url, c.resource, u.m.hc)
		if err == nil && prm != nil {
			return prm, nil
		}
		if i == 0 && challenge != "" && err != nil {
			// The upstream named this document: its failure is the answer.
			return nil, failf("%s: its protected resource metadata (%s) cannot be used: %v", u.what, challenge, prmReason(err))
		}
		if firstErr == nil && err != nil && !notFound(err) {
			firstErr = err
		}
	}
	if firstErr != nil {
		return nil, failf("%s: its protected resource metadata cannot be used: %v", u.what, prmReason(firstErr))
	}
	return &oauthex.ProtectedResourceMetadata{Resource: u.resource, AuthorizationServers: []string{root.String()}}, nil
}

func notFound(err error) bool {
	return strings.Contains(err.Error(), "bad status 404") || strings.Contains(err.Error(), "bad status 405")
}

// prmReason is the go-sdk's error without its call wrapper.
func prmReason(err error) string {
	s := err.Error()
	if i := strings.Index(s, "): "); i >= 0 && strings.HasPrefix(s, "GetProtectedResourceMetadata(") {
		s = s[i+3:]
	}
	return strings.TrimPrefix(s, "metadataURL: ")
}

// client is the OAuth client toolnexus is at the upstream's authorization
// server.
type client struct {
	id, secret string
	style      oauth2.AuthStyle
	key        string // ClientKey of the connections it makes
	asm        *oauthex.AuthServerMeta
	redirect   string
}

func (c client) config(scopes []string) *oauth2.Config {
	return &oauth2.Config{ClientID: c.id, ClientSecret: c.secret, RedirectURL: c.redirect, Scopes: scopes,
		Endpoint: oauth2.Endpoint{AuthURL: c.asm.AuthorizationEndpoint, TokenURL: c.asm.TokenEndpoint, AuthStyle: c.style}}
}

// Client keys for the clients that are not registration records.
const (
	clientConfigured = "config"
	clientMetadata   = "cimd"
)

// resolveClient is the client to log in with: the configured one, else a
// Client ID Metadata Document where the server takes one, else one
// registered dynamically (RFC 7591) — once per deployment, kept in the
// vault, under a lock so two replicas do not both register.
func (u *Upstream) resolveClient(ctx context.Context, d *discovery, redirect string) (client, error) {
	c := client{asm: d.asm, redirect: redirect, style: authStyle(d.asm.TokenEndpointAuthMethodsSupported)}
	if u.cfg.ClientID != "" {
		c.id, c.secret, c.key = u.cfg.ClientID, u.secret, clientConfigured
		return c, nil
	}
	if cimd := u.m.opts.ClientMetadataURL(); cimd != "" && d.asm.ClientIDMetadataDocumentSupported {
		c.id, c.key, c.style = cimd, clientMetadata, oauth2.AuthStyleInParams
		return c, nil
	}
	if d.asm.RegistrationEndpoint == "" {
		return c, failf("%s: the authorization server %s offers no way for toolnexus to register (no Client ID Metadata Documents, no registration endpoint): register an app there with the redirect URI %s and set oauth.clientId (and oauth.clientSecret)", u.what, d.asm.Issuer, redirect)
	}
	key := clientKey(u.name, d.asm.Issuer, redirect)
	if rec, ok, err := u.registered(ctx, key); err != nil || ok {
		return rec.client(c, key), err
	}
	unlock, err := u.m.v.Lock(ctx, "register/"+key, time.Minute)
	if err != nil {
		return c, failf("%s: registering toolnexus at the authorization server is in progress on another replica; try again shortly", u.what)
	}
	defer unlock()
	if rec, ok, err := u.registered(ctx, key); err != nil || ok {
		return rec.client(c, key), err
	}
	meta := &oauthex.ClientRegistrationMetadata{RedirectURIs: []string{redirect}, ClientName: "toolnexus",
		GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
		TokenEndpointAuthMethod: "client_secret_basic", Scope: strings.Join(d.scopes, " ")}
	resp, err := oauthex.RegisterClient(ctx, d.asm.RegistrationEndpoint, meta, u.m.hc)
	if err != nil {
		var re *oauthex.ClientRegistrationError
		if errors.As(err, &re) && tokenChars(re.ErrorCode) {
			return c, failf("%s: the authorization server refused to register toolnexus (%s)", u.what, re.ErrorCode)
		}
		return c, failf("%s: registering toolnexus at %s failed", u.what, d.asm.RegistrationEndpoint)
	}
	rec := clientRecord{ClientID: resp.ClientID, ClientSecret: resp.ClientSecret, AuthMethod: resp.TokenEndpointAuthMethod,
		Issuer: d.asm.Issuer, RedirectURI: redirect, RegisteredAt: time.Now()}
	if err := putJSON(ctx, u.m.v, key, rec, 0); err != nil {
		return c, errStore(err)
	}
	u.m.log.Info("registered toolnexus as an OAuth client (RFC 7591)", "upstream", u.name, "issuer", d.asm.Issuer)
	return rec.client(c, key), nil
}

func (u *Upstream) registered(ctx context.Context, key string) (clientRecord, bool, error) {
	var rec clientRecord
	found, err := getJSON(ctx, u.m.v, key, &rec)
	if err != nil {
		return rec, false, errStore(err)
	}
	return rec, found, nil
}

func (r clientRecord) client(c client, key string) client {
	c.id, c.secret, c.key = r.ClientID, r.ClientSecret, key
	switch r.AuthMethod {
	case "client_secret_post", "none":
		c.style = oauth2.AuthStyleInParams
	case "client_secret_basic":
		c.style = oauth2.AuthStyleInHeader
	}
	return c
}

// authStyle is how to authenticate at the token endpoint, from what it
// supports (OAuth 2.1 prefers client_secret_post).
func authStyle(supported []string) oauth2.AuthStyle {
	switch {
	case slices.Contains(supported, "client_secret_post"):
		return oauth2.AuthStyleInParams
	case slices.Contains(supported, "client_secret_basic"):
		return oauth2.AuthStyleInHeader
	}
	return oauth2.AuthStyleAutoDetect
}

// clientFor is the client a connection was made with (a refresh or a
// revocation must use it), at the issuer that made it.
func (u *Upstream) clientFor(ctx context.Context, issuer, key string) (client, error) {
	d, err := u.discover(ctx)
	if err != nil {
		return client{}, err
	}
	if d.asm.Issuer != issuer {
		return client{}, failf("%s: its authorization server is now %s, not %s which issued the connection", u.what, d.asm.Issuer, issuer)
	}
	c := client{asm: d.asm, style: authStyle(d.asm.TokenEndpointAuthMethodsSupported), key: key}
	switch key {
	case clientConfigured:
		c.id, c.secret = u.cfg.ClientID, u.secret
		return c, nil
	case clientMetadata:
		c.id, c.style = u.m.opts.ClientMetadataURL(), oauth2.AuthStyleInParams
		return c, nil
	}
	rec, ok, err := u.registered(ctx, key)
	if err != nil {
		return c, err
	}
	if !ok {
		return c, fmt.Errorf("%s: the client the connection was made with is no longer registered", u.what)
	}
	return rec.client(c, key), nil
}
