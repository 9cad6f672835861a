package builtin_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/builtin"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name    string
		raw     string
		enabled bool
		tools   map[string]bool
		ws      string
		warns   []string
		err     string
	}{
		{name: "absent", raw: "", enabled: true},
		{name: "null", raw: "null", enabled: true},
		{name: "true", raw: "true", enabled: true},
		{name: "false", raw: "false", enabled: false},
		{name: "empty object", raw: "{}", enabled: true},
		{name: "disabled", raw: `{"disabled": true}`, enabled: false},
		{name: "disabled false", raw: `{"disabled": false}`, enabled: true},
		{name: "enabled false", raw: `{"enabled": false}`, enabled: false},
		{name: "enabled true", raw: `{"enabled": true}`, enabled: true},
		{name: "disabled wins over enabled", raw: `{"disabled": true, "enabled": true}`, enabled: false},
		{name: "per-tool drop", raw: `{"tools": {"bash": false, "read": true}}`, enabled: true,
			tools: map[string]bool{"bash": false, "read": true}},
		{name: "off ignores the map", raw: `{"enabled": false, "tools": {"nope": false}}`, enabled: false},
		{name: "workspace", raw: `{"workspace": "./ws"}`, enabled: true, ws: "./ws"},
		{name: "workspace kept when off", raw: `{"disabled": true, "workspace": "ws"}`, enabled: false, ws: "ws"},
		{name: "unknown tool warns", raw: `{"tools": {"bsah": false, "zap": true}}`, enabled: true,
			tools: map[string]bool{"bsah": false, "zap": true},
			warns: []string{
				"tools.bsah: unknown builtin tool, ignored; the builtin tools are apply_patch, bash, edit, glob, grep, question, read, todowrite, webfetch, write",
				"tools.zap: unknown builtin tool, ignored; the builtin tools are apply_patch, bash, edit, glob, grep, question, read, todowrite, webfetch, write",
			}},
		{name: "bad type", raw: `"yes"`, err: `must be true, false or an object such as {"workspace": "./workspace", "tools": {"bash": false}}`},
		{name: "bad array", raw: `[]`, err: `must be true, false or an object`},
		{name: "bad enabled", raw: `{"enabled": "no"}`, err: "enabled: must be a boolean (true or false)"},
		{name: "bad disabled", raw: `{"disabled": 1}`, err: "disabled: must be a boolean (true or false)"},
		{name: "bad workspace", raw: `{"workspace": 3}`, err: "workspace: must be a string (a directory path, relative to the config file)"},
		{name: "bad tools", raw: `{"tools": ["bash"]}`, err: `tools: must be an object mapping tool names to booleans, such as {"bash": false}`},
		{name: "bad tool value", raw: `{"tools": {"bash": "off"}}`, err: "tools.bash: must be a boolean (false drops the tool, true keeps it)"},
		{name: "unknown key", raw: `{"tool": {"bash": false}}`, err: `tool: unknown key; the known keys are bash, disabled, enabled, tools, webfetch, workspace`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var raw json.RawMessage
			if tc.raw != "" {
				raw = json.RawMessage(tc.raw)
			}
			cfg, warns, err := builtin.ParseConfig(raw)
			if tc.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
					t.Fatalf("err = %v, want prefix %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v", err)
			}
			if cfg.Enabled != tc.enabled || cfg.Workspace != tc.ws {
				t.Errorf("cfg = %+v, want enabled=%v workspace=%q", cfg, tc.enabled, tc.ws)
			}
			if tc.enabled && !reflect.DeepEqual(cfg.Tools, tc.tools) && !(len(cfg.Tools) == 0 && len(tc.tools) == 0) {
				t.Errorf("tools = %v, want %v", cfg.Tools, tc.tools)
			}
			if !reflect.DeepEqual(warns, tc.warns) {
				t.Errorf("warnings = %q, want %q", warns, tc.warns)
			}
		})
	}
}

// startNames parses a config section, starts the source over a temp
// workspace and returns the published tool names and the status.
func startNames(t *testing.T, raw string) ([]string, sources.Status) {
	t.Helper()
	cfg, _, err := builtin.ParseConfig(json.RawMessage(raw))
	if err != nil {
		t.Fatal(err)
	}
	src := builtin.New(cfg, sources.Env{Workspace: t.TempDir()})
	defer src.Close(context.Background())
	if src.Layer() != registry.Layer(sources.KindBuiltin) {
		t.Errorf("layer = %s, want builtin/builtin", src.Layer())
	}
	reg := registry.New()
	if err := src.Start(context.Background(), reg); err != nil {
		t.Fatalf("Start: %v", err)
	}
	var names []string
	for _, e := range reg.Snapshot().Entries() {
		names = append(names, e.Tool.Name)
		if e.Tool.Source != "builtin" {
			t.Errorf("%s: source = %q, want builtin", e.Tool.Name, e.Tool.Source)
		}
	}
	return names, src.Status()
}

func TestSourceToggles(t *testing.T) {
	all := builtin.Names
	without := func(drop ...string) []string {
		var out []string
		for _, n := range all {
			if !contains(drop, n) {
				out = append(out, n)
			}
		}
		return out
	}
	tests := []struct {
		name  string
		raw   string
		names []string
		state sources.State
	}{
		{"default on", `null`, all, sources.Connected},
		{"true", `true`, all, sources.Connected},
		{"off", `false`, nil, sources.Disabled},
		{"disabled wins", `{"disabled": true, "enabled": true}`, nil, sources.Disabled},
		{"enabled false", `{"enabled": false, "tools": {"bash": true}}`, nil, sources.Disabled},
		{"per-tool drop", `{"tools": {"bash": false, "webfetch": false}}`, without("bash", "webfetch"), sources.Connected},
		{"true keeps", `{"tools": {"bash": true}}`, all, sources.Connected},
		{"unknown ignored", `{"tools": {"nope": false}}`, all, sources.Connected},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			names, st := startNames(t, tc.raw)
			if !reflect.DeepEqual(names, tc.names) {
				t.Errorf("tools = %v, want %v", names, tc.names)
			}
			if st.State != tc.state {
				t.Errorf("state = %s, want %s", st.State, tc.state)
			}
		})
	}
}

func TestWorkspaceResolution(t *testing.T) {
	base := t.TempDir()
	cfg := builtin.Config{Enabled: true, Workspace: "ws"}
	tools, err := builtin.Tools(cfg, sources.Env{BaseDir: base, Workspace: "/elsewhere"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		if tl.Name != "write" {
			continue
		}
		res := tl.Execute(context.Background(), callOf("write", `{"path":"f.txt","content":"x"}`))
		if res.IsError {
			t.Fatalf("write: %s", res.Output)
		}
	}
	if got := readFile(t, filepath.Join(base, "ws", "f.txt")); got != "x" {
		t.Errorf("file under BaseDir/ws = %q, want x", got)
	}

	if _, err := builtin.Tools(builtin.Config{Enabled: true}, sources.Env{}); err == nil {
		t.Error("no workspace at all: want an error")
	}
	src := builtin.New(builtin.Config{Enabled: true}, sources.Env{})
	if err := src.Start(context.Background(), registry.New()); err == nil || src.Status().State != sources.Failed {
		t.Errorf("no workspace: Start err = %v, state %s; want a failed source", err, src.Status().State)
	}
}

func TestSchemas(t *testing.T) {
	k := newKit(t)
	if len(k.tools) != 10 {
		t.Fatalf("%d tools, want 10", len(k.tools))
	}
	for name, tl := range k.tools {
		var s map[string]any
		if err := json.Unmarshal(tl.InputSchema, &s); err != nil {
			t.Fatalf("%s: schema: %v", name, err)
		}
		if s["type"] != "object" || s["additionalProperties"] != false {
			t.Errorf("%s: schema must be an object with additionalProperties false: %s", name, tl.InputSchema)
		}
		if tl.Description == "" {
			t.Errorf("%s: empty description", name)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
