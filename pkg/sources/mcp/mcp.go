// Package mcp turns MCP servers into tools. STUB: replaced by the MCP source.
package mcp

import (
	"encoding/json"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
)

// ServerConfig is one server entry.
type ServerConfig struct {
	Type    string   `json:"type,omitempty"`
	Command []string `json:"command,omitempty"`
	URL     string   `json:"url,omitempty"`
}

// ParseConfig reads the server map (the object under mcpServers/servers/mcp).
func ParseConfig(raw json.RawMessage) (map[string]ServerConfig, []string, error) {
	return nil, nil, nil
}

// New makes the source for one server.
func New(name string, cfg ServerConfig, env sources.Env) sources.Source {
	return sources.NewStatic(registry.LayerID{Kind: registry.KindMCP, Name: name}, nil, nil)
}
