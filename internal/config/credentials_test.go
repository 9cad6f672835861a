package config_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/internal/config"
)

// Every mistake in server.web, credentials and an oauth section is an
// error naming the key.
func TestWebCredentialsAndOAuthErrorsNameTheKey(t *testing.T) {
	for _, c := range []struct{ cfg, key, want string }{
		{`{"server": {"web": {"listen": "8090"}}}`, "server.web.listen", "is not HOST:PORT"},
		{`{"server": {"web": {"publicUrl": "tools.example.com"}}}`, "server.web.publicUrl", "must be a base URL"},
		{`{"server": {"web": {"publicUrl": "https://tools.example.com/x"}}}`, "server.web.publicUrl", "no path"},
		{`{"server": {"web": {"lisen": "x"}}}`, "server.web.lisen", "unknown"},
		{`{"credentials": {"dir": "/var/lib/tn"}}`, "credentials.keyFile", "is required"},
		{`{"credentials": {"keyFile": "/etc/tn/key"}}`, "credentials.dir", "is required without cluster.redis"},
		{`{"credentials": {"keyFile": "k", "dir": "d", "kind": "x"}}`, "credentials.kind", "unknown"},
		{`{"mcpServers": {"gh": {"url": "https://gh.test/mcp", "oauth": {"clientSecret": "x"}}}}`, "mcpServers.gh.oauth.clientSecret", "needs the clientId"},
		{`{"mcpServers": {"gh": {"url": "https://gh.test/mcp", "oauth": {"scopes": "repo"}}}}`, "mcpServers.gh.oauth.scopes", "must be an array"},
		{`{"mcpServers": {"gh": {"url": "https://gh.test/mcp", "oauth": {"scope": ["repo"]}}}}`, "mcpServers.gh.oauth.scope", "unknown key"},
		{`{"mcpServers": {"gh": {"command": "x", "oauth": {}}}}`, "mcpServers.gh.oauth", "only a remote server"},
		{`{"mcpServers": {"gh": {"url": "https://gh.test/mcp", "oauth": {}, "headers": {"authorization": "Bearer x"}}}}`, "mcpServers.gh.headers.authorization", "remove the configured Authorization"},
		{`{"mcpServers": {"gh": {"url": "https://gh.test/mcp", "oauth": {}, "tokenExchange": {"tokenUrl": "https://idp.test/t", "clientId": "c", "audience": "a"}}}}`, "mcpServers.gh.oauth", "exclude each other"},
	} {
		_, err := config.Parse([]byte(c.cfg), "", "/cfg")
		if err == nil || !strings.HasPrefix(err.Error(), "config: "+c.key+": ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s\n got %v\nwant config: %s: …%s…", c.cfg, err, c.key, c.want)
		}
	}
}

func TestOAuthConfigRead(t *testing.T) {
	cfg, err := config.Parse([]byte(`{
		"server": {"web": {"listen": "127.0.0.1:8090", "publicUrl": "https://tools.example.com/"}},
		"credentials": {"dir": "vault", "keyFile": "vault.key"},
		"mcpServers": {"gh": {"url": "https://gh.test/mcp", "oauth": {"clientId": "Iv1.x", "clientSecret": "${file:/run/secrets/gh}", "scopes": ["repo"]}},
		               "linear": {"url": "https://linear.test/mcp", "oauth": true},
		               "plain": {"url": "https://plain.test/mcp"}}}`), "/etc/tn/config.json", "/etc/tn")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Server.Web.PublicURL != "https://tools.example.com" || cfg.Credentials.Dir != filepath.Join("/etc/tn", "vault") || cfg.Credentials.KeyFile != "/etc/tn/vault.key" {
		t.Fatalf("%+v %+v", cfg.Server.Web, cfg.Credentials)
	}
	gh := cfg.MCP["gh"].OAuth
	if gh == nil || gh.ClientID != "Iv1.x" || gh.ClientSecret != "${file:/run/secrets/gh}" || len(gh.Scopes) != 1 {
		t.Fatalf("gh oauth %+v (the secret must stay a reference)", gh)
	}
	if got := cfg.OAuthServers(); strings.Join(got, ",") != "gh,linear" {
		t.Fatalf("OAuthServers %v", got)
	}
	if err := cfg.CheckOAuth(); err != nil || len(cfg.OAuthWarnings()) != 0 {
		t.Fatalf("CheckOAuth %v, warnings %v", err, cfg.OAuthWarnings())
	}
	off, _ := config.Parse([]byte(`{"mcpServers": {"gh": {"url": "https://gh.test/mcp", "oauth": {}}}}`), "", "/")
	if err := off.CheckOAuth(); err == nil || !strings.Contains(err.Error(), "mcpServers.gh.oauth: a caller's login ends at the web listener") {
		t.Fatalf("no web listener: %v", err)
	}
	if w := off.OAuthWarnings(); len(w) != 1 || !strings.Contains(w[0], "kept in memory") {
		t.Fatalf("warnings %v", w)
	}
}
