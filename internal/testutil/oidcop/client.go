package oidcop

import (
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// Client is a registered confidential client. A client-credentials token
// it obtains names Subject (ID when empty) and lists Groups in "groups":
// how the tests give two users different groups without a login page.
type Client struct {
	ID, Secret string
	Subject    string
	Groups     []string
	// NoExchange makes the provider refuse this client's token exchanges
	// (unauthorized_client), as a provider where the client is not
	// allowed to exchange tokens does.
	NoExchange bool
	// RedirectURIs make it a client of the browser flow (authorization
	// code with PKCE, refresh tokens) redirecting to one of them.
	RedirectURIs []string
	// AuthMethod is how it authenticates at the token endpoint
	// (client_secret_basic when empty; "none" for a public client).
	AuthMethod oidc.AuthMethod
}

func (c Client) subject() string {
	if c.Subject != "" {
		return c.Subject
	}
	return c.ID
}

// opClient is a Client as op.Client: a service client that may use client
// credentials and token exchange and gets JWT access tokens.
type opClient struct {
	Client
	issuer string
}

var _ op.Client = opClient{}

func (c opClient) GetID() string                       { return c.ID }
func (c opClient) RedirectURIs() []string              { return c.Client.RedirectURIs }
func (c opClient) PostLogoutRedirectURIs() []string    { return nil }
func (c opClient) ApplicationType() op.ApplicationType { return op.ApplicationTypeWeb }
func (c opClient) AuthMethod() oidc.AuthMethod {
	if c.Client.AuthMethod != "" {
		return c.Client.AuthMethod
	}
	return oidc.AuthMethodBasic
}
func (c opClient) ResponseTypes() []oidc.ResponseType {
	if len(c.Client.RedirectURIs) > 0 {
		return []oidc.ResponseType{oidc.ResponseTypeCode}
	}
	return nil
}
func (c opClient) GrantTypes() []oidc.GrantType {
	g := []oidc.GrantType{oidc.GrantTypeClientCredentials, oidc.GrantTypeTokenExchange}
	if len(c.Client.RedirectURIs) > 0 {
		g = append(g, oidc.GrantTypeCode, oidc.GrantTypeRefreshToken)
	}
	return g
}

// LoginURL is the provider's login page (browser.go) for an auth request.
func (c opClient) LoginURL(id string) string            { return c.issuer + loginPath + "?id=" + id }
func (c opClient) AccessTokenType() op.AccessTokenType  { return op.AccessTokenTypeJWT }
func (c opClient) IDTokenLifetime() time.Duration       { return time.Hour }
func (c opClient) DevMode() bool                        { return true }
func (c opClient) IsScopeAllowed(string) bool           { return true }
func (c opClient) IDTokenUserinfoClaimsAssertion() bool { return false }
func (c opClient) ClockSkew() time.Duration             { return 0 }
func (c opClient) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c opClient) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
