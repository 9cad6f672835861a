// Package http turns declared HTTP endpoints and OpenAPI operations into
// tools. STUB: replaced by the HTTP source.
package http

import (
	"encoding/json"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
)

// Config is the `http` and `openapi` sections together.
type Config struct {
	Tools   []json.RawMessage `json:"tools,omitempty"`
	OpenAPI []json.RawMessage `json:"openapi,omitempty"`
}

// ParseConfig reads the `http` and `openapi` sections (either may be nil).
func ParseConfig(httpRaw, openapiRaw json.RawMessage) (Config, []string, error) {
	return Config{}, nil, nil
}

// New makes the HTTP source.
func New(cfg Config, env sources.Env) sources.Source {
	return sources.NewStatic(registry.Layer(registry.KindHTTP), nil, nil)
}
