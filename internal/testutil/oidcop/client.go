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
}

func (c Client) subject() string {
	if c.Subject != "" {
		return c.Subject
	}
	return c.ID
}

// opClient is a Client as op.Client: a service client that may use client
// credentials and token exchange and gets JWT access tokens.
type opClient struct{ Client }

var _ op.Client = opClient{}

func (c opClient) GetID() string                       { return c.ID }
func (c opClient) RedirectURIs() []string              { return nil }
func (c opClient) PostLogoutRedirectURIs() []string    { return nil }
func (c opClient) ApplicationType() op.ApplicationType { return op.ApplicationTypeWeb }
func (c opClient) AuthMethod() oidc.AuthMethod         { return oidc.AuthMethodBasic }
func (c opClient) ResponseTypes() []oidc.ResponseType  { return nil }
func (c opClient) GrantTypes() []oidc.GrantType {
	return []oidc.GrantType{oidc.GrantTypeClientCredentials, oidc.GrantTypeTokenExchange}
}
func (c opClient) LoginURL(string) string               { return "" }
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
