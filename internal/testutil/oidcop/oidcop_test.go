package oidcop_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/testutil/oidcop"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const resource = "https://tools.test/mcp"

func verifier(p *oidcop.Provider) *auth.Authenticator {
	return auth.New(config.Auth{OIDC: []config.OIDCIssuer{{Issuer: p.Issuer, Audience: resource, PrincipalClaim: "sub",
		GroupsClaim: "groups", RequiredScopes: []string{"tools"}, ClockSkew: time.Minute}}},
		auth.Options{RefetchInterval: time.Nanosecond, HTTPClient: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}})
}

// Two clients get tokens naming their own subject and groups, for the
// resource they asked for; toolnexus's verifier (discovery, JWKS) accepts
// them; after a rotation the new key signs and the old token still passes.
func TestTokensGroupsAndRotation(t *testing.T) {
	p := oidcop.Start(t, oidcop.Client{ID: "alice-agent", Secret: "s1", Subject: "alice", Groups: []string{"dev"}},
		oidcop.Client{ID: "bob-agent", Secret: "s2", Subject: "bob", Groups: []string{"ops"}})
	au := verifier(p)
	alice := p.Token(t, "alice-agent", resource, "openid tools")
	for _, c := range []struct{ tok, sub, group string }{{alice, "alice", "dev"}, {p.Token(t, "bob-agent", resource, "tools"), "bob", "ops"}} {
		pr, err := au.Check(t.Context(), c.tok)
		if err != nil || pr.Name != c.sub || !slices.Equal(pr.Groups, []string{c.group}) || pr.Issuer != p.Issuer {
			t.Fatalf("%s: %+v %v", c.sub, pr, err)
		}
	}
	if c := oidcop.MustClaims(t, alice); c["aud"] != resource && !slices.Contains(c["aud"].([]any), any(resource)) {
		t.Fatalf("aud %v, want the resource asked for", c["aud"])
	}
	if _, err := au.Check(t.Context(), p.Token(t, "alice-agent", "https://other.test", "tools")); auth.ReasonOf(err) != auth.ReasonWrongAudience {
		t.Fatalf("a token for another resource: %v", err)
	}
	kid := p.Rotate()
	fresh := p.Token(t, "bob-agent", resource, "tools")
	var hdr struct{ Kid, Alg string }
	b, _ := base64.RawURLEncoding.DecodeString(strings.Split(fresh, ".")[0])
	_ = json.Unmarshal(b, &hdr)
	if hdr.Kid != kid || hdr.Alg != "ES256" {
		t.Fatalf("after Rotate the token is signed by %+v, want %s ES256", hdr, kid)
	}
	if _, err := au.Check(t.Context(), fresh); err != nil {
		t.Fatalf("new key's token: %v", err)
	}
	if _, err := au.Check(t.Context(), alice); err != nil {
		t.Fatalf("old key's token after the rotation: %v", err)
	}
}

// Token exchange: the new token keeps the subject and groups, is for the
// audience asked for, names the exchanging client as actor; a wrong client
// secret is refused.
func TestTokenExchange(t *testing.T) {
	p := oidcop.Start(t, oidcop.Client{ID: "alice-agent", Secret: "s1", Subject: "alice", Groups: []string{"dev"}},
		oidcop.Client{ID: "toolnexus", Secret: "exchange-secret"})
	subject := p.Token(t, "alice-agent", resource, "tools")
	exchange := func(secret string) (*http.Response, map[string]any) {
		form := url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "subject_token": {subject},
			"subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"}, "audience": {"https://upstream.test"}, "scope": {"read"}}
		req, _ := http.NewRequest(http.MethodPost, p.TokenURL, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth("toolnexus", secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		return resp, body
	}
	resp, body := exchange("exchange-secret")
	tok, _ := body["access_token"].(string)
	if resp.StatusCode != http.StatusOK || tok == "" {
		t.Fatalf("exchange: %s %v", resp.Status, body)
	}
	c := oidcop.MustClaims(t, tok)
	act, _ := c["act"].(map[string]any)
	if c["sub"] != "alice" || c["iss"] != p.Issuer || act["sub"] != "toolnexus" || c["scope"] != "read" || !slices.Equal(c["groups"].([]any), []any{"dev"}) {
		t.Fatalf("exchanged claims %v", c)
	}
	if x := p.Exchanges(); len(x) != 1 || x[0].Subject != "alice" || !slices.Equal(x[0].Audience, []string{"https://upstream.test"}) {
		t.Fatalf("exchanges %+v", x)
	}
	if resp, body := exchange("wrong"); resp.StatusCode == http.StatusOK || body["error"] != "invalid_client" {
		t.Fatalf("wrong secret: %s %v", resp.Status, body)
	}
}
