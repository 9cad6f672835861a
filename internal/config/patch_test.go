package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/internal/config"
)

// Config patches are JSON merge patches applied in order: objects merge
// key by key, null removes a key, anything else replaces it; a bad patch
// is refused naming the file.
func TestConfigPatches(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := write("toolnexus.json", `{"sandbox": {"mode": "auto", "network": false}, "limits": {"timeout": 60000},
		"sessions": {"max": 5}, "debug": true}`)
	hash := write("sessions.json", `{"sessions": {"idleTimeout": 3600000, "max": 100}}`)
	shared := write("shared.json", `{"sessions": {"shared": true}, "debug": null}`)
	cfg, err := config.LoadWith(base, config.Overrides{Patches: []string{hash, shared}})
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Sessions.Shared || cfg.Sessions.Max != 100 || cfg.Sessions.IdleTimeout.Milliseconds() != 3600000 {
		t.Errorf("sessions %+v: want both patches merged", cfg.Sessions)
	}
	if cfg.Sandbox.Mode != "auto" || cfg.Limits.Timeout.Milliseconds() != 60000 {
		t.Errorf("the base's other sections must stay: sandbox %+v, limits %+v", cfg.Sandbox, cfg.Limits)
	}
	if cfg.Debug {
		t.Error("null in a patch must remove the key")
	}
	for _, c := range []struct{ name, body, want string }{
		{"bad.json", `{"sessions": `, "config patch " + filepath.Join(dir, "bad.json") + ": not valid JSON"},
		{"list.json", `[1]`, "must be a JSON object"},
		{"typo.json", `{"sesions": {"max": 1}}`, "sesions: unknown top-level key"},
		// A patch that parses but sets a bad value: the error names the
		// key and, since the base alone is valid, the patch that set it.
		{"negative.json", `{"limits": {"timeout": -1}}`, "config: limits.timeout: must be >= 0 milliseconds (0 = no limit) (set by config patch " + filepath.Join(dir, "negative.json") + ")"},
		{"typo2.json", `{"sesions": {"max": 1}}`, "(set by config patch " + filepath.Join(dir, "typo2.json") + ")"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := config.LoadWith(base, config.Overrides{Patches: []string{write(c.name, c.body)}})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error = %v, want %q", err, c.want)
			}
		})
	}
	// The base at fault: no patch is blamed.
	badBase := write("bad-base.json", `{"limits": {"timeout": -1}}`)
	if _, err := config.LoadWith(badBase, config.Overrides{Patches: []string{hash}}); err == nil || strings.Contains(err.Error(), "config patch") {
		t.Fatalf("a bad base with a good patch: %v, want the base's error alone", err)
	}
	if _, err := config.LoadWith(base, config.Overrides{Patches: []string{filepath.Join(dir, "missing.json")}}); err == nil || !strings.Contains(err.Error(), "cannot read config patch") {
		t.Fatalf("missing patch: %v", err)
	}
}
