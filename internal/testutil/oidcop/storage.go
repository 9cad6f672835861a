package oidcop

import (
	"context"
	"crypto/rand"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// storage is the provider's state behind zitadel's op.Storage: clients,
// keys, the token exchanges answered, and the browser flow's requests,
// codes and refresh tokens (authcode.go). It implements client
// credentials (with the RFC 8707 resource as the audience), RFC 8693
// token exchange, the authorization code flow with PKCE and refresh
// tokens, revocation, and JWT access tokens; device codes answer "not
// supported".
type storage struct {
	mu        sync.Mutex
	issuer    string
	lifetime  time.Duration // of the access tokens issued from now on
	clients   map[string]Client
	keys      []key // the last one signs; all are published
	exchanges []Exchange
	fetches   int // JWKS requests answered

	authRequests map[string]*authRequest   // by id
	codes        map[string]string         // code → auth request id
	refreshes    map[string]*refreshRecord // by refresh token
	counts       Counts
	groups       map[string][]string // a login page user's groups (SetGroups)
}

var (
	_ op.Storage                        = (*storage)(nil)
	_ op.ClientCredentialsStorage       = (*storage)(nil)
	_ op.TokenExchangeStorage           = (*storage)(nil)
	_ op.CanGetPrivateClaimsFromRequest = (*storage)(nil)
)

var errUnsupported = errors.New("oidcop: not supported by the test provider")

// Exchange is one token exchange the provider granted.
type Exchange struct {
	ClientID string
	// Subject is the subject of the subject_token, which the issued token
	// keeps.
	Subject  string
	Audience []string
	Scopes   []string
}

// resourceKey carries the token request's RFC 8707 "resource" values to
// ClientCredentialsTokenRequest, which op calls without them.
type resourceKey struct{}

// ccRequest is a client-credentials token request.
type ccRequest struct {
	client   Client
	audience []string
	scopes   []string
}

func (r *ccRequest) GetSubject() string    { return r.client.subject() }
func (r *ccRequest) GetAudience() []string { return r.audience }
func (r *ccRequest) GetScopes() []string   { return r.scopes }

func (s *storage) client(id string) (Client, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[id]
	return c, ok
}

func (s *storage) ClientCredentials(_ context.Context, id, secret string) (op.Client, error) {
	c, ok := s.client(id)
	if !ok || c.Secret != secret {
		return nil, errors.New("unknown client or wrong secret")
	}
	return opClient{c, s.issuer}, nil
}

func (s *storage) ClientCredentialsTokenRequest(ctx context.Context, id string, scopes []string) (op.TokenRequest, error) {
	c, ok := s.client(id)
	if !ok {
		return nil, errors.New("unknown client")
	}
	aud, _ := ctx.Value(resourceKey{}).([]string)
	return &ccRequest{client: c, audience: aud, scopes: scopes}, nil
}

func (s *storage) GetClientByClientID(_ context.Context, id string) (op.Client, error) {
	c, ok := s.client(id)
	if !ok {
		return nil, errors.New("unknown client")
	}
	return opClient{c, s.issuer}, nil
}

func (s *storage) AuthorizeClientIDSecret(_ context.Context, id, secret string) error {
	if c, ok := s.client(id); !ok || c.Secret != secret {
		return errors.New("unknown client or wrong secret")
	}
	return nil
}

func (s *storage) CreateAccessToken(context.Context, op.TokenRequest) (string, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return rand.Text(), time.Now().Add(s.lifetime), nil
}

// GetPrivateClaimsFromRequest adds what a client-credentials token carries
// beyond the registered claims: the client's groups and the scope granted.
func (s *storage) GetPrivateClaimsFromRequest(_ context.Context, r op.TokenRequest, _ []string) (map[string]any, error) {
	claims := map[string]any{}
	if cc, ok := r.(*ccRequest); ok && len(cc.client.Groups) > 0 {
		claims["groups"] = cc.client.Groups
	}
	if sc := r.GetScopes(); len(sc) > 0 {
		claims["scope"] = strings.Join(sc, " ")
	}
	return claims, nil
}

// ValidateTokenExchangeRequest grants access tokens only (the default when
// none is asked for), for the subject of the subject_token, to clients
// not marked NoExchange.
func (s *storage) ValidateTokenExchangeRequest(_ context.Context, r op.TokenExchangeRequest) error {
	if c, _ := s.client(r.GetClientID()); c.NoExchange {
		return oidc.ErrUnauthorizedClient().WithDescription("this client may not exchange tokens")
	}
	if r.GetRequestedTokenType() == "" {
		r.SetRequestedTokenType(oidc.AccessTokenType)
	}
	if r.GetRequestedTokenType() != oidc.AccessTokenType {
		return oidc.ErrInvalidRequest().WithDescription("only access tokens are issued")
	}
	if len(r.GetAudience()) == 0 {
		return oidc.ErrInvalidTarget().WithDescription("name the audience the token is for")
	}
	return nil
}

func (s *storage) CreateTokenExchangeRequest(_ context.Context, r op.TokenExchangeRequest) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.exchanges = append(s.exchanges, Exchange{ClientID: r.GetClientID(), Subject: r.GetExchangeSubject(),
		Audience: append([]string(nil), r.GetAudience()...), Scopes: append([]string(nil), r.GetScopes()...)})
	return nil
}

// GetPrivateClaimsFromTokenExchangeRequest keeps the subject's groups and
// names the exchanging client as the actor (RFC 8693 "act").
func (s *storage) GetPrivateClaimsFromTokenExchangeRequest(_ context.Context, r op.TokenExchangeRequest) (map[string]any, error) {
	claims := map[string]any{"act": map[string]any{"sub": r.GetClientID()}}
	if g, ok := r.GetExchangeSubjectTokenClaims()["groups"]; ok {
		claims["groups"] = g
	}
	if sc := r.GetScopes(); len(sc) > 0 {
		claims["scope"] = strings.Join(sc, " ")
	}
	return claims, nil
}

func (s *storage) SetUserinfoFromTokenExchangeRequest(context.Context, *oidc.UserInfo, op.TokenExchangeRequest) error {
	return nil
}

func (s *storage) SigningKey(context.Context) (op.SigningKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return signingKey{s.keys[len(s.keys)-1]}, nil
}

func (s *storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256, jose.ES256}, nil
}

func (s *storage) KeySet(context.Context) ([]op.Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fetches++
	out := make([]op.Key, len(s.keys))
	for i, k := range s.keys {
		out[i] = publicKey{k}
	}
	return out, nil
}

func (s *storage) Health(context.Context) error { return nil }

// The rest of op.Storage serves what the tests do not use: sessions,
// introspection, userinfo and the JWT profile grant. The browser flow
// (authorization code, refresh tokens, revocation) is in authcode.go.

func (s *storage) TerminateSession(context.Context, string, string) error { return errUnsupported }

// SetUserinfoFromScopes is the user's part of an ID token: the subject
// (the ID token takes it from here), and the user's groups (SetGroups)
// for a login that asked for the scope "groups".
func (s *storage) SetUserinfoFromScopes(_ context.Context, ui *oidc.UserInfo, subject, _ string, scopes []string) error {
	ui.Subject = subject
	s.mu.Lock()
	defer s.mu.Unlock()
	if g, ok := s.groups[subject]; ok && slices.Contains(scopes, "groups") {
		ui.AppendClaims("groups", g)
	}
	return nil
}

// SetGroups gives the person who logs in as subject at the login page
// these groups: the ID token of a login that asked for the scope "groups"
// lists them in its "groups" claim.
func (p *Provider) SetGroups(subject string, groups ...string) {
	p.store.mu.Lock()
	defer p.store.mu.Unlock()
	if p.store.groups == nil {
		p.store.groups = map[string][]string{}
	}
	p.store.groups[subject] = groups
}
func (s *storage) SetUserinfoFromToken(context.Context, *oidc.UserInfo, string, string, string) error {
	return errUnsupported
}
func (s *storage) SetIntrospectionFromToken(context.Context, *oidc.IntrospectionResponse, string, string, string) error {
	return errUnsupported
}
func (s *storage) GetPrivateClaimsFromScopes(context.Context, string, string, []string) (map[string]any, error) {
	return nil, nil
}
func (s *storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errUnsupported
}
func (s *storage) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, errUnsupported
}
