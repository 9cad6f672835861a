package auth_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/testutil/idp"
)

// A console's person is the principal the same identity gets on gRPC: a
// static token's principal by its name, an OIDC identity's by its issuer's
// rules (name prefix, groups, admin), and refused where gRPC refuses it.
func TestPersonPrincipal(t *testing.T) {
	t.Parallel()
	p := idp.Start(t)
	au, _ := authFor(t, p.Issuer, func(a *config.Auth) {
		a.OIDC[0].Name = "corp"
		a.Tokens = []config.Token{{Name: "ci", Value: "tok-ci-0123456789", Tools: []string{"read"}}}
	})
	if got := au.StaticPrincipal("ci"); got == nil || got.Name != "ci" || got.Allows("bash", "builtin") || !got.Allows("read", "builtin") {
		t.Fatalf("static principal: %#v", got)
	}
	if au.StaticPrincipal("nobody") != nil {
		t.Fatal("a name no token has gave a principal")
	}
	claims := map[string]json.RawMessage{"sub": json.RawMessage(`"alice"`), "groups": json.RawMessage(`["ops","dev"]`)}
	pc, err := au.ClaimsOf(p.Issuer, claims)
	if err != nil || pc.Principal != "alice" || len(pc.Groups) != 2 {
		t.Fatalf("claims: %+v %v", pc, err)
	}
	pr, err := au.PersonPrincipal(p.Issuer, pc)
	if err != nil || pr.Name != "corp:alice" || !pr.Admin || !pr.Allows("bash", "builtin") || pr.Issuer != p.Issuer || pr.BearerToken() != "" {
		t.Fatalf("person: %#v admin %v %v", pr, pr.Admin, err)
	}
	if _, err := au.ClaimsOf(p.Issuer, map[string]json.RawMessage{"sub": json.RawMessage(`42`)}); err == nil {
		t.Fatal("a subject that is not a string was read")
	}
	if _, err := au.PersonPrincipal("https://elsewhere.test", pc); !errors.Is(err, auth.ErrNoIssuer) {
		t.Fatalf("an issuer auth.oidc does not list: %v", err)
	}
	unnamed, _ := authFor(t, p.Issuer, func(a *config.Auth) {
		a.Tokens = []config.Token{{Name: "ci", Value: "tok-ci-0123456789"}}
	})
	if _, err := unnamed.PersonPrincipal(p.Issuer, auth.PersonClaims{Principal: "ci"}); err == nil {
		t.Fatal("an unnamed issuer's subject took a static token's name")
	}
	var nilAuth *auth.Authenticator
	if nilAuth.StaticPrincipal("ci") != nil {
		t.Fatal("auth off gave a principal")
	}
}
