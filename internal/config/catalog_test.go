package config

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestPinningAndOverrides(t *testing.T) {
	dir := t.TempDir()
	cfg, err := Parse([]byte(`{}`), "", dir)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Pinning.On() || cfg.Pinning.Mode != PinningOff || cfg.ToolOverrides != nil {
		t.Fatalf("defaults: %+v %v", cfg.Pinning, cfg.ToolOverrides)
	}
	cfg, err = Parse([]byte(`{"pinning": {"mode": "hold", "dir": "pins", "holdFirstSight": true},
		"overrides": {"up_get": {"name": "weather", "description": "The weather.", "arguments": {"units": "metric", "n": 1.50}}}}`), "", dir)
	if err != nil {
		t.Fatal(err)
	}
	if p := cfg.Pinning; p.Mode != PinningHold || p.Dir != "pins" || !p.HoldFirstSight {
		t.Fatalf("pinning: %+v", p)
	}
	o := cfg.ToolOverrides["up_get"]
	if o.Name != "weather" || *o.Description != "The weather." || string(o.Arguments["n"]) != "1.50" || string(o.Arguments["units"]) != `"metric"` {
		t.Fatalf("override: %+v", o)
	}
	if got, err := cfg.PinningDir(); err != nil || got != filepath.Join(dir, "pins") {
		t.Fatalf("PinningDir = %q, %v", got, err)
	}
	if _, err := Parse([]byte(`{"pinning": {"mode": "warn"}, "cluster": {"name": "test", "redis": {"url": "redis://127.0.0.1:1"}}}`), "", dir); err != nil {
		t.Fatalf("pins in Redis need no dir: %v", err)
	}
}

func TestPinningAndOverridesRefused(t *testing.T) {
	bad := []struct{ name, json, key, says string }{
		{"mode", `{"pinning": {"mode": "strict"}}`, "pinning.mode", `"hold"`},
		{"no dir", `{"pinning": {"mode": "hold"}}`, "pinning.dir", "cluster.redis"},
		{"dir and redis", `{"pinning": {"mode": "hold", "dir": "p"}, "cluster": {"name": "test", "redis": {"url": "redis://127.0.0.1:1"}}}`, "pinning.dir", "remove"},
		{"unknown key", `{"pinning": {"mode": "hold", "dir": "p", "hold": true}}`, "pinning.hold", "unknown key"},
		{"not an object", `{"overrides": []}`, "overrides", "object"},
		{"null entry", `{"overrides": {"a": null}}`, "overrides.a", "must be an object"},
		{"empty entry", `{"overrides": {"a": {}}}`, "overrides.a", "changes nothing"},
		{"bad name", `{"overrides": {"a": {"name": "b c"}}}`, "overrides.a.name", "not a tool name"},
		{"two take one name", `{"overrides": {"a": {"name": "x"}, "b": {"name": "x"}}}`, "overrides.b.name", `"a"`},
		{"unknown key in entry", `{"overrides": {"a": {"descripton": "x"}}}`, "overrides.a.descripton", "unknown key"},
		{"arguments not an object", `{"overrides": {"a": {"arguments": [1]}}}`, "overrides.a.arguments", "object"},
		{"empty argument", `{"overrides": {"a": {"arguments": {"": 1}}}}`, "overrides.a.arguments", "empty"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.json), "", t.TempDir())
			var ce *Error
			if !errors.As(err, &ce) || ce.Key != c.key || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("error %v, want one keyed %s saying %q", err, c.key, c.says)
			}
		})
	}
}

// The pins must stay out of what the model's file tools reach: a model
// that can write there could rewrite its own pins.
func TestPinningDirOutsideTheWorkspace(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ pins, want string }{
		{"workspace/pins", "overlaps"},
		{"workspace", "overlaps"},
		{".", "overlaps"},
		{"workspace.sessions/x", "overlaps"},
		{"state/pins", ""},
	} {
		cfg, err := Parse([]byte(`{"builtins": {"workspace": "workspace"}, "pinning": {"mode": "hold", "dir": "`+tc.pins+`"}}`), "", dir)
		if err != nil {
			t.Fatal(err)
		}
		_, err = cfg.PinningDir()
		var ce *Error
		if tc.want == "" && err != nil || tc.want != "" && (!errors.As(err, &ce) || ce.Key != "pinning.dir" || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("pinning.dir %s: %v, want %q", tc.pins, err, tc.want)
		}
	}
}
