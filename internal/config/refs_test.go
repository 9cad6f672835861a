package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/internal/config"
)

// An unresolved reference is named by the key as the config spells it:
// `--check` said mcpServers.NAME.environment.K for a config that says env.
func TestCheckRefsNamesTheKeyAsWritten(t *testing.T) {
	for _, spelling := range []string{"env", "environment"} {
		t.Run(spelling, func(t *testing.T) {
			cfg, err := config.Parse([]byte(`{"mcpServers": {"local": {"command": "srv", "`+spelling+`": {"API_KEY": "${TOOLNEXUS_REFS_TEST_UNSET}"}}}}`), "", t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			var ce *config.Error
			if err := cfg.CheckRefs(); !errors.As(err, &ce) || ce.Key != "mcpServers.local."+spelling+".API_KEY" {
				t.Fatalf("CheckRefs: %v, want a config error at mcpServers.local.%s.API_KEY", err, spelling)
			}
		})
	}
}

// --workspace and TOOLNEXUS_WORKSPACE win over builtins.workspace, as the
// precedence says; the container image sets the variable, so a mounted
// config's own workspace is overridden — loudly: a warning at start and in
// --check naming both and the fix. The same directory both ways is quiet.
func TestWorkspaceOverrideOfTheConfigIsLoud(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "toolnexus.json")
	if err := os.WriteFile(path, []byte(`{"builtins": {"workspace": "/data/ws"}, "skills": []}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadWith(path, config.Overrides{Workspace: "/workspace"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Builtins.Workspace != "/workspace" {
		t.Fatalf("workspace %q: the override must still win", cfg.Builtins.Workspace)
	}
	if w := strings.Join(cfg.Warnings, "\n"); !strings.Contains(w, `builtins.workspace "/data/ws" is overridden by --workspace / TOOLNEXUS_WORKSPACE (/workspace)`) {
		t.Errorf("no warning about the overridden workspace: %q", w)
	}
	same, err := config.LoadWith(path, config.Overrides{Workspace: "/data/ws"})
	if err != nil {
		t.Fatal(err)
	}
	if len(same.Warnings) != 0 {
		t.Errorf("the same directory both ways warned: %q", same.Warnings)
	}
}
