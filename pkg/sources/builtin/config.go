package builtin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/toolnexus/toolnexus/pkg/sources/field"
)

// Config is the `builtins` config section.
type Config struct {
	// Enabled switches the whole source; ParseConfig sets it true unless
	// the section says false, {"disabled": true} or {"enabled": false}.
	Enabled bool `json:"enabled"`
	// Workspace is the root the file tools are confined to; relative to
	// the config file's directory (sources.Env.BaseDir). Empty means
	// sources.Env.Workspace.
	Workspace string `json:"workspace,omitempty"`
	// Tools drops tools by name: false drops, true (or absent) keeps.
	Tools map[string]bool `json:"tools,omitempty"`
	// Bash and Webfetch are builtins.bash and builtins.webfetch.
	Bash     BashConfig     `json:"bash,omitzero"`
	Webfetch WebfetchConfig `json:"webfetch,omitzero"`
}

// Names lists the ten builtin tools in byte order.
var Names = []string{"apply_patch", "bash", "edit", "glob", "grep", "question", "read", "todowrite", "webfetch", "write"}

var knownKeys = []string{"bash", "disabled", "enabled", "tools", "webfetch", "workspace"}

// ParseConfig reads the `builtins` section. Absent or null means every tool
// on. It accepts true, false, or an object with the keys disabled, enabled,
// tools and workspace; disabled:true wins over enabled, and a source that is
// off ignores its tools map. Tool names the map does not know are returned
// as warnings; errors name the key inside the section and how to fix it.
func ParseConfig(raw json.RawMessage) (Config, []string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return Config{Enabled: true}, nil, nil
	}
	var on bool
	if err := json.Unmarshal(raw, &on); err == nil {
		return Config{Enabled: on}, nil, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return Config{}, nil, field.Errorf("", `must be true, false or an object such as {"workspace": "./workspace", "tools": {"bash": false}}`)
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !slices.Contains(knownKeys, k) {
			return Config{}, nil, field.Errorf(k, "unknown key; the known keys are %s", strings.Join(knownKeys, ", "))
		}
	}
	cfg := Config{Enabled: true}
	disabled, err := field.Object(obj).Bool("", "disabled", "must be a boolean (true or false)")
	if err != nil {
		return Config{}, nil, err
	}
	enabled, err := field.Object(obj).Bool("", "enabled", "must be a boolean (true or false)")
	if err != nil {
		return Config{}, nil, err
	}
	if raw, ok := obj["workspace"]; ok && !field.IsNull(raw) {
		if err := json.Unmarshal(raw, &cfg.Workspace); err != nil {
			return Config{}, nil, field.Errorf("workspace", "must be a string (a directory path, relative to the config file)")
		}
	}
	if err := parseSecurityKeys(obj, &cfg); err != nil {
		return Config{}, nil, err
	}
	if (disabled != nil && *disabled) || (enabled != nil && !*enabled) {
		// Whole-source off: the tools map does not matter, not even
		// for warnings.
		cfg.Enabled = false
		return cfg, nil, nil
	}
	var warns []string
	if raw, ok := obj["tools"]; ok && !field.IsNull(raw) {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return Config{}, nil, field.Errorf("tools", `must be an object mapping tool names to booleans, such as {"bash": false}`)
		}
		names := make([]string, 0, len(m))
		for name := range m {
			names = append(names, name)
		}
		sort.Strings(names)
		cfg.Tools = make(map[string]bool, len(m))
		for _, name := range names {
			var keep bool
			if err := json.Unmarshal(m[name], &keep); err != nil {
				return Config{}, nil, field.Errorf("tools."+name, "must be a boolean (false drops the tool, true keeps it)")
			}
			cfg.Tools[name] = keep
			if !slices.Contains(Names, name) {
				warns = append(warns, fmt.Sprintf("tools.%s: unknown builtin tool, ignored; the builtin tools are %s", name, strings.Join(Names, ", ")))
			}
		}
	}
	return cfg, warns, nil
}

// Keep reports whether the named tool is on under this config.
func (c Config) Keep(name string) bool {
	if !c.Enabled {
		return false
	}
	keep, listed := c.Tools[name]
	return !listed || keep
}
