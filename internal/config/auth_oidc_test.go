package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/config"
)

func TestAuthOIDCDefaultsAndList(t *testing.T) {
	t.Parallel()
	cfg, err := parse(t, `{"auth": {"oidc": {"issuer": "https://login.example.com/realms/a", "audience": "toolnexus"},
		"groups": {"ops": {"tools": ["bash", "source:mcp*"], "admin": true}, "none": {}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	a := cfg.Auth
	if !a.Enabled() || len(a.OIDC) != 1 {
		t.Fatalf("auth = %+v, want one issuer and auth on", a)
	}
	want := config.OIDCIssuer{Issuer: "https://login.example.com/realms/a", Audience: "toolnexus",
		PrincipalClaim: "sub", GroupsClaim: "groups", ClockSkew: 60 * time.Second}
	if got := a.OIDC[0]; got.Issuer != want.Issuer || got.Audience != want.Audience || got.PrincipalClaim != want.PrincipalClaim ||
		got.GroupsClaim != want.GroupsClaim || got.ClockSkew != want.ClockSkew || got.JWKSURL != "" || got.RequiredScopes != nil {
		t.Fatalf("issuer = %+v, want %+v", got, want)
	}
	if g := a.Groups["ops"]; !g.Admin || len(g.Tools) != 2 {
		t.Fatalf("group ops = %+v", g)
	}
	if g, ok := a.Groups["none"]; !ok || g.Tools == nil || len(g.Tools) != 0 {
		t.Fatalf("group none = %+v, want no tools (not every tool)", g)
	}

	cfg, err = parse(t, `{"auth": {"oidc": [
		{"issuer": "http://127.0.0.1:5556/dex", "audience": "a", "jwksUrl": "http://127.0.0.1:5556/keys",
		 "principalClaim": "email", "groupsClaim": "roles", "requiredScopes": ["tools:run"], "clockSkew": 0},
		{"issuer": "https://login.microsoftonline.com/t/v2.0", "audience": "api://toolnexus", "name": "entra", "jwksRefresh": 60000}],
		"groups": {"g": {"tools": ["*"]}},
		"tokens": [{"name": "ci", "token": "0123456789abcdef", "groups": ["g"]}]}}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Auth.OIDC[0]; len(cfg.Auth.OIDC) != 2 || got.ClockSkew != 0 || got.PrincipalClaim != "email" || got.RequiredScopes[0] != "tools:run" {
		t.Fatalf("issuers = %+v", cfg.Auth.OIDC)
	}
	if got := cfg.Auth.OIDC[1]; got.Name != "entra" || got.JWKSRefresh != time.Minute || cfg.Auth.OIDC[0].JWKSRefresh != config.DefaultJWKSRefresh {
		t.Fatalf("names and refresh: %+v", cfg.Auth.OIDC)
	}
	if cfg.Auth.Tokens[0].Groups[0] != "g" {
		t.Fatalf("token groups = %v", cfg.Auth.Tokens[0].Groups)
	}
}

func TestAuthOIDCErrorsNameTheKey(t *testing.T) {
	t.Parallel()
	cases := []struct{ text, want string }{
		{`{"auth": {"oidc": {"issuer": "login.example.com", "audience": "a"}}}`, "config: auth.oidc.issuer: \"login.example.com\" is not an absolute http(s) URL"},
		{`{"auth": {"oidc": {"issuer": "", "audience": "a"}}}`, "config: auth.oidc.issuer: is required"},
		{`{"auth": {"oidc": [{"issuer": "http://login.example.com", "audience": "a"}]}}`, "config: auth.oidc[0].issuer: \"http://login.example.com\" uses http:// on a host that is not loopback"},
		{`{"auth": {"oidc": {"issuer": "https://login.example.com"}}}`, "config: auth.oidc.audience: is required"},
		{`{"auth": {"oidc": {"issuer": "https://x.test", "audience": "a", "jwksUrl": "keys"}}}`, "config: auth.oidc.jwksUrl:"},
		{`{"auth": {"oidc": {"issuer": "https://x.test", "audience": "a", "clockSkew": -1}}}`, "config: auth.oidc.clockSkew: must be >= 0"},
		{`{"auth": {"oidc": {"issuer": "https://x.test", "audience": "a", "jwksRefresh": 10}}}`, "config: auth.oidc.jwksRefresh: must be at least 1000 ms"},
		{`{"auth": {"oidc": {"issuer": "https://x.test", "audience": "a", "name": "Corp"}}}`, "config: auth.oidc.name: \"Corp\" is not a short name"},
		{`{"auth": {"oidc": {"issuer": "https://x.test", "audience": "a", "name": "group"}}}`, "config: auth.oidc.name: \"group\" is reserved"},
		{`{"auth": {"oidc": [{"issuer": "https://x.test", "audience": "a"}, {"issuer": "https://y.test", "audience": "a"}]}}`, "config: auth.oidc[1].name: is required"},
		{`{"auth": {"oidc": [{"issuer": "https://x.test", "audience": "a", "name": "c"}, {"issuer": "https://y.test", "audience": "a", "name": "c"}]}}`, "config: auth.oidc[1].name: \"c\" is used twice"},
		{`{"auth": {"oidc": {"issuer": "https://x.test", "audience": "a", "name": "corp"}, "tokens": [{"name": "corp:alice", "token": "0123456789abcdef"}]}}`, "config: auth.tokens[0].name: \"corp:alice\" reads as a principal of the issuer named \"corp\""},
		{`{"auth": {"oidc": {"issuer": "https://x.test", "audience": "a", "requiredScopes": ["a b"]}}}`, "config: auth.oidc.requiredScopes[0]:"},
		{`{"auth": {"oidc": {"issuer": "https://x.test", "audince": "a"}}}`, "config: auth.oidc.audince: unknown key"},
		{`{"auth": {"oidc": [{"issuer": "https://x.test", "audience": "a"}, {"issuer": "https://x.test", "audience": "b"}]}}`, "config: auth.oidc[1].issuer: \"https://x.test\" is listed twice"},
		{`{"auth": {"oidc": 5}}`, "config: auth.oidc: must be an object"},
		{`{"auth": {"groups": {"g": {"tools": ["[a"]}}}}`, "config: auth.groups.g.tools[0]: bad glob pattern \"[a\""},
		{`{"auth": {"groups": {"g": {"tool": ["a"]}}}}`, "config: auth.groups.g.tool: unknown key"},
		{`{"auth": {"groups": {"g": {}}, "tokens": [{"name": "n", "token": "0123456789", "groups": ["h"]}]}}`, "config: auth.tokens[0].groups[0]: group \"h\" is not in auth.groups (known: g)"},
		{`{"server": {"mcp": {"resourse": "x"}}}`, "config: server.mcp.resourse: unknown key"},
		{`{"server": {"mcp": {"resource": "tools.example.com/mcp"}}}`, "config: server.mcp.resource: \"tools.example.com/mcp\" is not an absolute http(s) URL"},
	}
	for _, c := range cases {
		if got := mustFail(t, c.text).Error(); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s:\n got %s\nwant %s…", c.text, got, c.want)
		}
	}
}
