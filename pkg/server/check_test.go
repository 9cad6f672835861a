package server_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/server"
)

// TestCheckRefusesWhatStartRefuses: every check New makes before it starts
// anything, Check makes too, so `--check` with a deployment's flags cannot
// say "config OK" for a server that would then exit 2.
func TestCheckRefusesWhatStartRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name    string
		opts    server.Options
		wantKey string // "" = valid
	}{
		{name: "the embedded default", opts: server.Options{Workspace: ws}},
		{name: "sessions inside the --workspace override",
			opts:    server.Options{ConfigPath: write("sessions.json", `{"sessions": {"root": "ws/.sessions"}}`), Workspace: ws},
			wantKey: "sessions.root"},
		{name: "a public --listen override without a credential",
			opts: server.Options{Workspace: ws, Listen: "0.0.0.0:0"}, wantKey: "server.listen"},
		{name: "a public --mcp-listen override without a credential",
			opts: server.Options{Workspace: ws, MCPListen: "0.0.0.0:0"}, wantKey: "server.mcp.listen"},
		{name: "a public listener with --insecure", opts: server.Options{Workspace: ws, Listen: "0.0.0.0:0", Insecure: true}},
		{name: "TLS files that do not exist",
			opts:    server.Options{ConfigPath: write("tls.json", `{"server": {"tls": {"cert": "missing.crt", "key": "missing.key"}}}`), Workspace: ws},
			wantKey: "server.tls"},
		{name: "a telemetry header naming an unset variable",
			opts: server.Options{ConfigPath: write("otel.json",
				`{"telemetry": {"endpoint": "http://127.0.0.1:1", "headers": {"authorization": "${TOOLNEXUS_CHECK_TEST_UNSET}"}}}`), Workspace: ws},
			wantKey: "telemetry.headers"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := server.Check(c.opts)
			if c.wantKey == "" {
				if err != nil {
					t.Fatalf("Check: %v, want valid", err)
				}
				return
			}
			var ce *server.ConfigError
			if !errors.As(err, &ce) || ce.Key != c.wantKey {
				t.Fatalf("Check: %v, want a config error naming %s", err, c.wantKey)
			}
			// New refuses the same, with the same key.
			if _, err := server.New(c.opts); !errors.As(err, &ce) || ce.Key != c.wantKey {
				t.Fatalf("New: %v, want a config error naming %s", err, c.wantKey)
			}
		})
	}
}
