package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/internal/config"
)

func TestMCPStateKeyFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := strings.Repeat("k", 40)
	if err := os.WriteFile(filepath.Join(dir, "state.key"), []byte(good+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "short.key"), []byte("too-short"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, file string
		want       string // the key read, or a fragment of the error
		ok         bool
	}{
		{"unset", "", "", true},
		{"relative to the config", "state.key", good, true},
		{"absolute", filepath.Join(dir, "state.key"), good, true},
		{"missing", "absent.key", "server.mcp.stateKeyFile", false},
		{"too short", "short.key", "at least 32", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Parse([]byte(`{"server": {"mcp": {"stateKeyFile": "`+tc.file+`"}}}`), filepath.Join(dir, "c.json"), dir)
			if err != nil {
				t.Fatal(err)
			}
			key, err := cfg.MCPStateKey()
			if tc.ok {
				if err != nil || string(key) != tc.want {
					t.Fatalf("key %q, err %v; want %q", key, err, tc.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "server.mcp.stateKeyFile") {
				t.Fatalf("err %v, want one naming server.mcp.stateKeyFile and %q", err, tc.want)
			}
		})
	}
}
