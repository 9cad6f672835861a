// Package a2a turns remote A2A agents into tools. STUB: replaced by the A2A source.
package a2a

import (
	"encoding/json"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
)

// AgentConfig is one agent entry.
type AgentConfig struct {
	Card string `json:"card"`
}

// ParseConfig reads the `agents` section.
func ParseConfig(raw json.RawMessage) (map[string]AgentConfig, []string, error) {
	return nil, nil, nil
}

// New makes the source for one agent.
func New(id string, cfg AgentConfig, env sources.Env) sources.Source {
	return sources.NewStatic(registry.LayerID{Kind: registry.KindA2A, Name: id}, nil, nil)
}
