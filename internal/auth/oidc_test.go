package auth_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/testutil/idp"
	"github.com/toolnexus/toolnexus/internal/testutil/oidcop"
)

const audience = "https://toolnexus.test/mcp"

func authFor(t *testing.T, issuer string, mod func(*config.Auth)) (*auth.Authenticator, *[]auth.Reason) {
	t.Helper()
	a := config.Auth{
		OIDC:   []config.OIDCIssuer{{Issuer: issuer, Audience: audience, PrincipalClaim: "sub", GroupsClaim: "groups", ClockSkew: time.Minute}},
		Groups: map[string]config.Group{"dev": {Tools: []string{"read", "grep"}}, "ops": {Tools: []string{"bash"}, Admin: true}},
	}
	if mod != nil {
		mod(&a)
	}
	var failed []auth.Reason
	return auth.New(a, auth.Options{RefetchInterval: time.Nanosecond, Failed: func(r auth.Reason) { failed = append(failed, r) }}), &failed
}

// Every way a hostile or broken token is refused names its own reason, and
// the refusal text never contains the token.
func TestJWTRefusalReasons(t *testing.T) {
	t.Parallel()
	p := idp.Start(t)
	au, failed := authFor(t, p.Issuer, func(a *config.Auth) { a.OIDC[0].RequiredScopes = []string{"tools"} })
	good := idp.Claims{"sub": "alice", "aud": audience, "scope": "openid tools"}
	cases := []struct {
		name string
		tok  string
		want auth.Reason
	}{
		{"bad signature", p.MintTampered(good, good.With("sub", "root")), auth.ReasonBadSignature},
		{"unknown key", p.MintUnpublished(good), auth.ReasonUnknownKey},
		{"alg none", p.MintAlgNone(good), auth.ReasonAlgNone},
		{"hmac with the public key", p.MintHMACWithPublicKey(good), auth.ReasonAlgMismatch},
		{"expired", p.Mint(good.With("exp", time.Now().Add(-2*time.Minute).Unix())), auth.ReasonExpired},
		{"not yet valid", p.Mint(good.With("nbf", time.Now().Add(2*time.Minute).Unix())), auth.ReasonNotYetValid},
		{"wrong issuer", p.Mint(good.With("iss", "https://evil.test")), auth.ReasonWrongIssuer},
		{"wrong audience", p.Mint(good.With("aud", "https://other.test/mcp")), auth.ReasonWrongAudience},
		{"missing scope", p.Mint(good.With("scope", "openid")), auth.ReasonMissingScope},
		{"no exp", p.Mint(good.With("exp", nil)), auth.ReasonBadClaims},
		{"exp as a string", p.Mint(good.With("exp", strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10))), auth.ReasonBadClaims},
		{"nbf as a string", p.Mint(good.With("nbf", "0")), auth.ReasonNotYetValid},
		{"no subject", p.Mint(good.With("sub", "")), auth.ReasonBadClaims},
		{"not a jwt", "just-some-opaque-token", auth.ReasonUnknownToken},
	}
	for _, c := range cases {
		pr, err := au.Check(t.Context(), c.tok)
		if pr != nil || !errors.Is(err, auth.ErrInvalid) || auth.ReasonOf(err) != c.want {
			t.Errorf("%s: principal %v, error %v (reason %v), want reason %v", c.name, pr, err, auth.ReasonOf(err), c.want)
			continue
		}
		if strings.Contains(err.Error(), c.tok) || !strings.HasPrefix(err.Error(), "invalid bearer token") {
			t.Errorf("%s: error %q", c.name, err)
		}
	}
	if len(*failed) != len(cases) {
		t.Fatalf("counted %v, want one per case", *failed)
	}
	// Within the clock skew, exp and nbf are still accepted.
	for _, c := range []idp.Claims{good.With("exp", time.Now().Add(-30*time.Second).Unix()), good.With("nbf", time.Now().Add(30*time.Second).Unix())} {
		if _, err := au.Check(t.Context(), p.Mint(c)); err != nil {
			t.Errorf("token within the skew refused: %v", err)
		}
	}
}

// A JWT's groups choose its tools: the union over the groups auth.groups
// lists, none when no group matches; an admin group makes an admin.
func TestJWTGroupsMapToTools(t *testing.T) {
	t.Parallel()
	p := idp.Start(t)
	au, _ := authFor(t, p.Issuer, nil)
	for _, c := range []struct {
		groups      []string
		allow, deny []string
		admin       bool
	}{
		{[]string{"dev"}, []string{"read", "grep"}, []string{"bash", "write"}, false},
		{[]string{"dev", "ops", "unknown"}, []string{"read", "bash"}, []string{"write"}, true},
		{[]string{"unknown"}, nil, []string{"read", "bash", "write"}, false},
		{nil, nil, []string{"read"}, false},
	} {
		claims := idp.Claims{"sub": "bob", "aud": []string{"other", audience}}
		if c.groups != nil {
			claims["groups"] = c.groups
		}
		pr, err := au.Check(t.Context(), p.Mint(claims))
		if err != nil {
			t.Fatal(err)
		}
		if pr.Name != "bob" || pr.Admin != c.admin || pr.Issuer != p.Issuer || !pr.Restricted() {
			t.Errorf("groups %v: principal %+v admin=%v", c.groups, pr, pr.Admin)
		}
		for _, n := range c.allow {
			if !pr.Allows(n, "builtin") {
				t.Errorf("groups %v: %s refused", c.groups, n)
			}
		}
		for _, n := range c.deny {
			if pr.Allows(n, "builtin") {
				t.Errorf("groups %v: %s allowed", c.groups, n)
			}
		}
	}
}

// A static token naming groups gets their tools as well as its own.
func TestStaticTokenGroups(t *testing.T) {
	t.Parallel()
	au := auth.New(config.Auth{
		Groups: map[string]config.Group{"ops": {Tools: []string{"bash"}, Admin: true}},
		Tokens: []config.Token{{Name: "ci", Value: "0123456789abcdef", Tools: []string{"read"}, Groups: []string{"ops"}}},
	}, auth.Options{})
	pr, err := au.Check(t.Context(), "0123456789abcdef")
	if err != nil {
		t.Fatal(err)
	}
	if !pr.Admin || !pr.Allows("bash", "builtin") || !pr.Allows("read", "builtin") || pr.Allows("write", "builtin") || pr.BearerToken() != "" {
		t.Fatalf("principal %+v admin=%v", pr, pr.Admin)
	}
}

// The provider (zitadel/oidc) signs with a new key: new tokens are
// accepted without a restart (the unknown key id fetches the set again),
// old ones stay valid — one already verified, and one never seen before.
func TestJWTKeyRotation(t *testing.T) {
	t.Parallel()
	p := oidcop.Start(t, oidcop.Client{ID: "alice", Secret: "a"}, oidcop.Client{ID: "carol", Secret: "c"})
	au, _ := authFor(t, p.Issuer, nil)
	old, unseen := p.Token(t, "alice", audience, ""), p.Token(t, "carol", audience, "")
	if _, err := au.Check(t.Context(), old); err != nil {
		t.Fatal(err)
	}
	p.Rotate()
	fresh := p.Token(t, "carol", audience, "")
	if pr, err := au.Check(t.Context(), fresh); err != nil || pr.Name != "carol" {
		t.Fatalf("token signed by the rotated key: %v, %v", pr, err)
	}
	if pr, err := au.Check(t.Context(), unseen); err != nil || pr.Name != "carol" {
		t.Fatalf("old key's unseen token after rotation: %v, %v", pr, err)
	}
	if pr, err := au.Check(t.Context(), old); err != nil || pr.Name != "alice" {
		t.Fatalf("token of the old key after rotation: %v, %v", pr, err)
	}
}

// A provider down at start refuses JWTs with its own reason, static tokens
// work meanwhile, and once it answers JWTs work without a restart.
func TestJWTProviderDownAtStart(t *testing.T) {
	t.Parallel()
	p := oidcop.Start(t, oidcop.Client{ID: "alice", Secret: "a"})
	tok := p.Token(t, "alice", audience, "")
	p.Stop()
	au := auth.New(config.Auth{
		OIDC:   []config.OIDCIssuer{{Issuer: p.Issuer, Audience: audience, PrincipalClaim: "sub", GroupsClaim: "groups", ClockSkew: time.Minute}},
		Tokens: []config.Token{{Name: "static", Value: "0123456789abcdef"}},
	}, auth.Options{RefetchInterval: time.Nanosecond})
	if _, err := au.Check(t.Context(), tok); auth.ReasonOf(err) != auth.ReasonProviderUnreachable || !strings.Contains(err.Error(), "identity provider unreachable") {
		t.Fatalf("while down: %v", err)
	}
	if pr, err := au.Check(t.Context(), "0123456789abcdef"); err != nil || pr.Name != "static" {
		t.Fatalf("static token while the provider is down: %v", err)
	}
	p.Serve()
	if pr, err := au.Check(t.Context(), tok); err != nil || pr.Name != "alice" {
		t.Fatalf("after the provider came up: %v, %v", pr, err)
	}
}

// A verified token is cached: the provider going away afterwards does not
// matter until the token expires, and the principal carries the token for
// exchange while printing only its name.
func TestJWTCachedAndPrincipalHidesToken(t *testing.T) {
	t.Parallel()
	p := idp.Start(t)
	au, _ := authFor(t, p.Issuer, nil)
	tok := p.Mint(idp.Claims{"sub": "alice", "aud": audience})
	first, err := au.Check(t.Context(), tok)
	if err != nil {
		t.Fatal(err)
	}
	p.Stop()
	again, err := au.Check(t.Context(), tok)
	if err != nil || again != first {
		t.Fatalf("second check: %v, %v (want the cached principal)", again, err)
	}
	if first.BearerToken() != tok {
		t.Fatal("the principal does not carry its verified token")
	}
	for _, s := range []string{fmtAll(first)} {
		if strings.Contains(s, tok) {
			t.Fatalf("printing the principal shows the token: %s", s)
		}
	}
}

// Tokens naming made-up key ids cannot make toolnexus hammer the provider:
// within the refetch interval, one fetch serves every unknown key id.
func TestJWTUnknownKeyRefetchIsRateLimited(t *testing.T) {
	t.Parallel()
	p := idp.Start(t)
	au := auth.New(config.Auth{OIDC: []config.OIDCIssuer{{Issuer: p.Issuer, Audience: audience, PrincipalClaim: "sub", GroupsClaim: "groups"}}},
		auth.Options{RefetchInterval: time.Hour})
	before := p.KeyFetches()
	for range 20 {
		if _, err := au.Check(t.Context(), p.MintUnpublished(idp.Claims{"sub": "mallory", "aud": audience})); auth.ReasonOf(err) != auth.ReasonUnknownKey {
			t.Fatalf("unpublished key: %v", err)
		}
	}
	if n := p.KeyFetches() - before; n != 0 {
		t.Fatalf("%d key fetches for unknown key ids within the interval, want 0 (the start fetch was %d)", n, before)
	}
}

// BenchmarkCheck is the per-call cost of authentication: a static token
// and a JWT found in the verified-token cache. Both should be a SHA-256
// and a few compares, with no allocation.
func BenchmarkCheck(b *testing.B) {
	p := idp.Start(b)
	au := auth.New(config.Auth{
		OIDC:   []config.OIDCIssuer{{Issuer: p.Issuer, Audience: audience, PrincipalClaim: "sub", GroupsClaim: "groups", ClockSkew: time.Minute}},
		Tokens: []config.Token{{Name: "static", Value: "static-agent-secret-01"}},
	}, auth.Options{})
	jwt := p.Mint(idp.Claims{"sub": "alice", "aud": audience})
	for _, c := range []struct{ name, header string }{{"static", "Bearer static-agent-secret-01"}, {"jwt", "Bearer " + jwt}} {
		b.Run(c.name, func(b *testing.B) {
			if _, err := au.CheckHeader(b.Context(), c.header); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := au.CheckHeader(b.Context(), c.header); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The key set is fetched again on schedule, and a Cache-Control max-age
// shorter than auth.oidc.jwksRefresh wins: a key the provider drops is
// refused, and the tokens it signed leave the cache, without a token
// naming an unknown key id to set it off.
func TestJWKSMaxAgeShortensTheSchedule(t *testing.T) {
	t.Parallel()
	p := idp.Start(t)
	p.SetMaxAge(1)
	au := auth.New(config.Auth{OIDC: []config.OIDCIssuer{{Issuer: p.Issuer, Audience: audience, PrincipalClaim: "sub", GroupsClaim: "groups",
		ClockSkew: time.Minute, JWKSRefresh: time.Hour}}}, auth.Options{})
	tok := p.Mint(idp.Claims{"sub": "alice", "aud": audience})
	if _, err := au.Check(t.Context(), tok); err != nil {
		t.Fatal(err)
	}
	p.Rotate()
	p.Retire("rsa-1")
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err := au.Check(t.Context(), tok)
		if auth.ReasonOf(err) == auth.ReasonUnknownKey {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("20 s after the key left a JWKS with max-age=1 (jwksRefresh 1 h): %v", err)
		}
		<-time.After(100 * time.Millisecond) // polling for the scheduled refresh
	}
	if pr, err := au.Check(t.Context(), p.Mint(idp.Claims{"sub": "bob", "aud": audience})); err != nil || pr.Name != "bob" {
		t.Fatalf("the new key: %v %v", pr, err)
	}
}

// A token naming an unknown key id waits for the fetch in flight only as
// long as its caller does: a cancelled request is answered at once.
func TestJWKSWaitEndsWithTheRequest(t *testing.T) {
	t.Parallel()
	p := idp.Start(t)
	au := auth.New(config.Auth{OIDC: []config.OIDCIssuer{{Issuer: p.Issuer, Audience: audience, PrincipalClaim: "sub", GroupsClaim: "groups"}}},
		auth.Options{RefetchInterval: time.Nanosecond})
	release := p.HoldKeys()
	defer release()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := au.Check(ctx, p.MintUnpublished(idp.Claims{"sub": "mallory", "aud": audience}))
		done <- err
	}()
	for p.Held() == 0 {
		<-time.After(10 * time.Millisecond) // until the fetch is in flight
	}
	cancel()
	if err := <-done; auth.ReasonOf(err) != auth.ReasonUnknownKey {
		t.Fatalf("cancelled while the keys were fetched: %v, want unknown key", err)
	}
	release()
}

// The attack of issue 45: the provider drops a key (say, it leaked) while
// nobody calls; after a pause longer than jwksRefresh, the very first
// call with a token that key signed — one verified and cached before, or
// one its thief mints — is refused. The scheduled fetch used to start in
// the background of that call, which went on with the old keys.
func TestJWKSRemovedKeyRefusedOnTheFirstCallAfterIdle(t *testing.T) {
	t.Parallel()
	for _, which := range []string{"cached", "stolen"} {
		t.Run(which, func(t *testing.T) {
			t.Parallel()
			p := idp.Start(t)
			au := auth.New(config.Auth{OIDC: []config.OIDCIssuer{{Issuer: p.Issuer, Audience: audience, PrincipalClaim: "sub", GroupsClaim: "groups",
				ClockSkew: time.Minute, JWKSRefresh: 300 * time.Millisecond}}}, auth.Options{})
			cached := p.Mint(idp.Claims{"sub": "alice", "aud": audience}) // rsa-1
			if _, err := au.Check(t.Context(), cached); err != nil {
				t.Fatal(err)
			}
			p.Rotate()
			p.Retire("rsa-1")
			tok := cached
			if which == "stolen" {
				tok = p.MintWith("rsa-1", idp.Claims{"sub": "mallory", "aud": audience})
			}
			time.Sleep(700 * time.Millisecond) // idle past the refresh interval: no call at all
			if pr, err := au.Check(t.Context(), tok); auth.ReasonOf(err) != auth.ReasonUnknownKey {
				t.Fatalf("the first call after the pause, with the %s token of the removed key: %v %v, want refused (unknown key)", which, pr, err)
			}
			if pr, err := au.Check(t.Context(), p.Mint(idp.Claims{"sub": "bob", "aud": audience})); err != nil || pr.Name != "bob" {
				t.Fatalf("the new key's token: %v %v", pr, err)
			}
		})
	}
}
