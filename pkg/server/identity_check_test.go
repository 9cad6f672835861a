package server_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/server"
)

// --check refuses the bad identity configs a start refuses, naming the
// key; an identity provider alone counts as a credential for a public
// listener.
func TestCheckRefusesBadIdentityConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	for i, c := range []struct{ cfg, wantKey string }{
		{`{"auth": {"oidc": {"issuer": "login.example.com", "audience": "a"}}}`, "auth.oidc.issuer"},
		{`{"auth": {"oidc": {"issuer": "http://login.example.com", "audience": "a"}}}`, "auth.oidc.issuer"},
		{`{"auth": {"oidc": [{"issuer": "https://login.example.com"}]}}`, "auth.oidc[0].audience"},
		{`{"auth": {"groups": {"dev": {"tools": ["[oops"]}}}}`, "auth.groups.dev.tools[0]"},
		{`{"http": [{"name": "t", "url": "https://api.test/x", "tokenExchange": {"clientId": "c", "audience": "a"}}]}`, "http[0].tokenExchange.tokenUrl"},
		{`{"mcpServers": {"up": {"url": "https://mcp.test/mcp", "tokenExchange": {"clientId": "c", "audience": "a"}}}}`, "mcpServers.up.tokenExchange.tokenUrl"},
		{`{"mcpServers": {"up": {"command": "srv", "tokenExchange": {"tokenUrl": "https://idp.test/token", "clientId": "c", "audience": "a"}}}}`, "mcpServers.up.tokenExchange"},
		{`{"builtins": false, "auth": {"oidc": {"issuer": "https://login.example.com", "audience": "a"}}, "server": {"listen": "0.0.0.0:0"}}`, ""},
	} {
		path := filepath.Join(dir, "c"+string(rune('0'+i))+".json")
		if err := os.WriteFile(path, []byte(c.cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := server.Check(server.Options{ConfigPath: path, Workspace: ws})
		if c.wantKey == "" {
			if err != nil {
				t.Errorf("%s: %v, want valid", c.cfg, err)
			}
			continue
		}
		var ce *server.ConfigError
		if !errors.As(err, &ce) || ce.Key != c.wantKey {
			t.Errorf("%s: Check %v, want a config error naming %s", c.cfg, err, c.wantKey)
		}
	}
}
