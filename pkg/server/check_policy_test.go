package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/server"
)

// TestCheckRefusesABrokenPolicy: a policy file that does not parse is
// refused by --check as a reload refuses it (internal/core's
// TestPolicyReload), naming the file, line and column.
func TestCheckRefusesABrokenPolicy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pol := filepath.Join(dir, "tools.cedar")
	cfg := filepath.Join(dir, "toolnexus.json")
	if err := os.WriteFile(pol, []byte("permit(principal, action, resource);\nforbid(principal, action, resource) when { context.x like };\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(`{"skills": [], "policy": {"files": ["tools.cedar"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := server.Check(server.Options{ConfigPath: cfg, Listen: "127.0.0.1:0", Workspace: filepath.Join(dir, "ws")}); err == nil || !strings.Contains(err.Error(), pol+":2:60") {
		t.Fatalf("--check with a broken policy: %v", err)
	}
}
