package sources

import "github.com/toolnexus/toolnexus/pkg/registry"

// The kinds of the sources this project ships, in precedence order, lowest
// first: MCP beats everything, an embedder's own Go tools beat declared HTTP
// tools, and a builtin is the first thing shadowed. The precedences leave
// gaps so an embedder can slot a kind of its own between two of these.
var (
	KindDebug   = registry.Kind{Name: "debug", Precedence: 10}
	KindBuiltin = registry.Kind{Name: "builtin", Precedence: 20}
	KindSkill   = registry.Kind{Name: "skill", Precedence: 30}
	KindA2A     = registry.Kind{Name: "a2a", Precedence: 40}
	KindHTTP    = registry.Kind{Name: "http", Precedence: 50}
	KindNative  = registry.Kind{Name: "native", Precedence: 60}
	KindMCP     = registry.Kind{Name: "mcp", Precedence: 70}
)

var kinds = [...]registry.Kind{KindDebug, KindBuiltin, KindSkill, KindA2A, KindHTTP, KindNative, KindMCP}

// Kinds lists the shipped kinds in precedence order.
func Kinds() []registry.Kind { return kinds[:] }

// ParseKind maps a shipped kind's name back to its Kind (case-sensitive).
func ParseKind(s string) (registry.Kind, bool) {
	for _, k := range kinds {
		if k.Name == s {
			return k, true
		}
	}
	return registry.Kind{}, false
}
