package oidcop

import (
	"context"
	"crypto/rand"
	"errors"
	"slices"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// The browser flow's state: auth requests (until their code is
// exchanged), codes, and refresh tokens (rotated on every use, revocable).

// Counts are what the provider's browser flow did, for tests to assert.
type Counts struct {
	// Logins completed at the login page.
	Logins int
	// CodeExchanges and Refreshes are tokens issued by the authorization
	// code and refresh token grants.
	CodeExchanges, Refreshes int
	// Revocations of refresh tokens.
	Revocations int
	// Registrations made by dynamic client registration.
	Registrations int
}

// authRequest is one authorization request, done once its user logged in.
type authRequest struct {
	id          string
	clientID    string
	redirectURI string
	state       string
	scopes      []string
	audience    []string // the RFC 8707 resource asked for, else the client
	nonce       string   // the OpenID Connect nonce, repeated in the ID token
	challenge   *oidc.CodeChallenge
	subject     string // set at login
	authTime    time.Time
}

var _ op.AuthRequest = (*authRequest)(nil)

func (a *authRequest) GetID() string                         { return a.id }
func (a *authRequest) GetACR() string                        { return "" }
func (a *authRequest) GetAMR() []string                      { return []string{"pwd"} }
func (a *authRequest) GetAudience() []string                 { return a.audience }
func (a *authRequest) GetAuthTime() time.Time                { return a.authTime }
func (a *authRequest) GetClientID() string                   { return a.clientID }
func (a *authRequest) GetCodeChallenge() *oidc.CodeChallenge { return a.challenge }
func (a *authRequest) GetNonce() string                      { return a.nonce }
func (a *authRequest) GetRedirectURI() string                { return a.redirectURI }
func (a *authRequest) GetResponseType() oidc.ResponseType    { return oidc.ResponseTypeCode }
func (a *authRequest) GetResponseMode() oidc.ResponseMode    { return oidc.ResponseModeQuery }
func (a *authRequest) GetScopes() []string                   { return a.scopes }
func (a *authRequest) GetState() string                      { return a.state }
func (a *authRequest) GetSubject() string                    { return a.subject }
func (a *authRequest) Done() bool                            { return a.subject != "" }

// refreshRecord is one live refresh token's grant.
type refreshRecord struct {
	token, id string
	clientID  string
	subject   string
	audience  []string
	scopes    []string
	authTime  time.Time
}

var _ op.RefreshTokenRequest = (*refreshRecord)(nil)

func (r *refreshRecord) GetAMR() []string                 { return []string{"pwd"} }
func (r *refreshRecord) GetAudience() []string            { return r.audience }
func (r *refreshRecord) GetAuthTime() time.Time           { return r.authTime }
func (r *refreshRecord) GetClientID() string              { return r.clientID }
func (r *refreshRecord) GetScopes() []string              { return r.scopes }
func (r *refreshRecord) GetSubject() string               { return r.subject }
func (r *refreshRecord) SetCurrentScopes(scopes []string) { r.scopes = scopes }

// resourceOf is the RFC 8707 resource the authorization request carried
// (browser.go puts it in the context; zitadel's parser drops it).
func resourceOf(ctx context.Context) []string {
	aud, _ := ctx.Value(resourceKey{}).([]string)
	return aud
}

func (s *storage) CreateAuthRequest(ctx context.Context, r *oidc.AuthRequest, _ string) (op.AuthRequest, error) {
	a := &authRequest{id: "ar_" + rand.Text(), clientID: r.ClientID, redirectURI: r.RedirectURI, state: r.State,
		scopes: slices.Clone(r.Scopes), audience: resourceOf(ctx), nonce: r.Nonce}
	if len(a.audience) == 0 {
		// An OpenID login without a resource: the tokens are for the
		// client itself, so its ID token's aud names it (OIDC Core 2).
		a.audience = []string{r.ClientID}
	}
	if r.CodeChallenge != "" {
		a.challenge = &oidc.CodeChallenge{Challenge: r.CodeChallenge, Method: r.CodeChallengeMethod}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.authRequests[a.id] = a
	return a, nil
}

func (s *storage) AuthRequestByID(_ context.Context, id string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.authRequests[id]; ok {
		return a, nil
	}
	return nil, errors.New("unknown auth request")
}

func (s *storage) AuthRequestByCode(_ context.Context, code string) (op.AuthRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.authRequests[s.codes[code]]; ok {
		return a, nil
	}
	return nil, oidc.ErrInvalidGrant().WithDescription("unknown or used code")
}

func (s *storage) SaveAuthCode(_ context.Context, id, code string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.codes[code] = id
	return nil
}

// DeleteAuthRequest ends a request once its code was exchanged: the code
// is single use.
func (s *storage) DeleteAuthRequest(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.authRequests, id)
	for c, i := range s.codes {
		if i == id {
			delete(s.codes, c)
		}
	}
	return nil
}

// login marks an auth request done for subject (the login page).
func (s *storage) login(id, subject string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.authRequests[id]
	if !ok {
		return false
	}
	a.subject, a.authTime = subject, time.Now()
	s.counts.Logins++
	return true
}

// CreateAccessAndRefreshTokens issues a refresh token for a code exchange
// or a refresh (rotating the one used).
func (s *storage) CreateAccessAndRefreshTokens(_ context.Context, r op.TokenRequest, current string) (string, string, time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := &refreshRecord{token: "rt_" + rand.Text(), id: "rti_" + rand.Text(), subject: r.GetSubject(),
		audience: slices.Clone(r.GetAudience()), scopes: slices.Clone(r.GetScopes()), authTime: time.Now()}
	switch req := r.(type) {
	case *authRequest:
		rec.clientID = req.clientID
		s.counts.CodeExchanges++
	case *refreshRecord:
		rec.clientID, rec.authTime = req.clientID, req.authTime
		s.counts.Refreshes++
	}
	if current != "" {
		delete(s.refreshes, current)
	}
	s.refreshes[rec.token] = rec
	return "at_" + rand.Text(), rec.token, time.Now().Add(s.lifetime), nil
}

func (s *storage) TokenRequestByRefreshToken(_ context.Context, token string) (op.RefreshTokenRequest, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.refreshes[token]; ok {
		cp := *r
		return &cp, nil
	}
	return nil, op.ErrInvalidRefreshToken
}

func (s *storage) GetRefreshTokenInfo(_ context.Context, clientID, token string) (string, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.refreshes[token]; ok && r.clientID == clientID {
		return r.subject, r.id, nil
	}
	return "", "", op.ErrInvalidRefreshToken
}

// RevokeToken revokes a refresh token by its id (access tokens are JWTs
// and stay valid until they expire, as at most providers).
func (s *storage) RevokeToken(_ context.Context, tokenOrID, _, clientID string) *oidc.Error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for t, r := range s.refreshes {
		if (r.id == tokenOrID || t == tokenOrID) && r.clientID == clientID {
			delete(s.refreshes, t)
			s.counts.Revocations++
		}
	}
	return nil
}

// LiveRefreshTokens is how many refresh tokens the provider would honour.
func (p *Provider) LiveRefreshTokens() int {
	p.store.mu.Lock()
	defer p.store.mu.Unlock()
	return len(p.store.refreshes)
}

// Counts is what the browser flow did so far.
func (p *Provider) Counts() Counts {
	p.store.mu.Lock()
	defer p.store.mu.Unlock()
	return p.store.counts
}

// RefreshTokens are the refresh tokens the provider would honour (a test
// looks for them where they must never be).
func (p *Provider) RefreshTokens() []string {
	p.store.mu.Lock()
	defer p.store.mu.Unlock()
	out := make([]string, 0, len(p.store.refreshes))
	for t := range p.store.refreshes {
		out = append(out, t)
	}
	return out
}
