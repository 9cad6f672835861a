package auth

import (
	"encoding/json"
	"errors"
	"fmt"
)

// What a browser session (the console, internal/console) needs: the
// principal behind a login, found again on each request from what the
// login proved, so that a reload that removes a token, changes a group's
// tools or its admin right applies to a logged-in person at once, exactly
// as it applies to the same caller's next gRPC call.

// ErrNoIssuer is a login at an issuer that auth.oidc does not list (any
// more).
var ErrNoIssuer = errors.New("the issuer is not in auth.oidc")

// StaticPrincipal is the principal of the static token named name, or nil
// when auth.tokens has no token of that name (any more). It is only for a
// caller who has proved the token once (a console login): the name is
// not a credential.
func (a *Authenticator) StaticPrincipal(name string) *Principal {
	if a == nil {
		return nil
	}
	for i := range a.tokens {
		if a.tokens[i].p.Name == name {
			return a.tokens[i].p
		}
	}
	return nil
}

// PersonClaims are the two claims of a verified OIDC identity a principal
// is made of: the one auth.oidc's principalClaim names and the one its
// groupsClaim names. A console keeps them in its session instead of the
// token.
type PersonClaims struct {
	Principal string   `json:"principal"`
	Groups    []string `json:"groups,omitempty"`
}

// ClaimsOf reads a verified ID token's claims the way a JWT from issuer
// is read on gRPC: its principalClaim (a non-empty string) and its
// groupsClaim (a string or a list).
func (a *Authenticator) ClaimsOf(issuer string, claims map[string]json.RawMessage) (PersonClaims, error) {
	is := a.issuer(issuer)
	if is == nil {
		return PersonClaims{}, ErrNoIssuer
	}
	var pc PersonClaims
	if json.Unmarshal(claims[is.cfg.PrincipalClaim], &pc.Principal) != nil || pc.Principal == "" {
		return PersonClaims{}, fmt.Errorf("the ID token has no %q claim (auth.oidc principalClaim) holding a string", is.cfg.PrincipalClaim)
	}
	if raw, ok := claims[is.cfg.GroupsClaim]; ok {
		pc.Groups = stringOrList(raw)
	}
	return pc, nil
}

// PersonPrincipal is the principal issuer's person goes by, as a JWT from
// that issuer with these claims makes it on gRPC: "NAME:subject" for a
// named issuer, the groups' tools and admin right from auth.groups. It
// refuses a bare subject that is another identity source's principal
// (a static token's name), as gRPC does. The principal carries no token:
// nothing the console does exchanges one.
func (a *Authenticator) PersonPrincipal(issuer string, c PersonClaims) (*Principal, error) {
	is := a.issuer(issuer)
	if is == nil {
		return nil, ErrNoIssuer
	}
	name, ok := is.principalName(c.Principal)
	if !ok {
		return nil, fmt.Errorf("the principal %q is the name of a static token or of another issuer's principal; give the issuer a name in auth.oidc", c.Principal)
	}
	p := principalOfGroups(name, c.Groups, is.groups)
	p.Issuer = is.cfg.Issuer
	return p, nil
}

func (a *Authenticator) issuer(url string) *issuer {
	if a == nil {
		return nil
	}
	for _, is := range a.issuers {
		if is.cfg.Issuer == url {
			return is
		}
	}
	return nil
}
