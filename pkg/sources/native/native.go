// Package native is the source for Go functions registered by the program
// that embeds toolnexus: your own tools, in layer "native", which beats
// every source but MCP.
package native

import (
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// New makes the native source from tools built with tool.New, tool.Native
// or tool.Typed. Their source label stays as built ("custom" by default).
func New(tools ...tool.Tool) *sources.Static {
	return sources.NewStatic(registry.Layer(sources.KindNative), tools, nil)
}
