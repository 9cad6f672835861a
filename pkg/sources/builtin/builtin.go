// Package builtin provides the ten built-in shell and file tools, confined to
// a workspace root. STUB: replaced by the builtin source implementation.
package builtin

import (
	"encoding/json"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
)

// Config is the `builtins` section.
type Config struct {
	Enabled   bool            `json:"enabled"`
	Workspace string          `json:"workspace,omitempty"`
	Tools     map[string]bool `json:"tools,omitempty"`
}

// ParseConfig reads the `builtins` section; nil means the default (all on).
func ParseConfig(raw json.RawMessage) (Config, []string, error) {
	return Config{Enabled: true}, nil, nil
}

// New makes the builtin source.
func New(cfg Config, env sources.Env) sources.Source {
	return sources.NewStatic(registry.Layer(registry.KindBuiltin), nil, nil)
}
