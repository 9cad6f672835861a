package registry

import "fmt"

// Kind is a source kind. Its numeric order is the precedence order, lowest
// first: a tool in a later kind's layer shadows a same-named tool in an
// earlier one.
type Kind uint8

// The kinds in precedence order (DESIGN §4): MCP beats everything, your own
// Go tools beat declared HTTP tools, and a builtin is the first thing shadowed.
const (
	KindDebug Kind = iota
	KindBuiltin
	KindSkill
	KindA2A
	KindHTTP
	KindNative
	KindMCP
	kindCount
)

var kindNames = [...]string{
	KindDebug:   "debug",
	KindBuiltin: "builtin",
	KindSkill:   "skill",
	KindA2A:     "a2a",
	KindHTTP:    "http",
	KindNative:  "native",
	KindMCP:     "mcp",
}

// String is the kind's config and metrics name.
func (k Kind) String() string {
	if k < kindCount {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// ParseKind maps a name back to its Kind.
func ParseKind(s string) (Kind, bool) {
	for k, n := range kindNames {
		if n == s {
			return Kind(k), true
		}
	}
	return 0, false
}

// Kinds lists every kind in precedence order.
func Kinds() []Kind {
	out := make([]Kind, kindCount)
	for i := range out {
		out[i] = Kind(i)
	}
	return out
}

// LayerID names one layer: a source kind plus the instance name (the MCP
// server or A2A agent id; the kind's own name for single-instance sources).
// Within a kind, layers are ordered by name, so of two MCP servers offering
// the same tool name the one whose name sorts last wins.
type LayerID struct {
	Kind Kind
	Name string
}

// Layer is a LayerID for a single-instance source, named after its kind.
func Layer(k Kind) LayerID { return LayerID{Kind: k, Name: k.String()} }

// String renders "kind/name".
func (id LayerID) String() string { return id.Kind.String() + "/" + id.Name }

func (id LayerID) less(o LayerID) bool {
	if id.Kind != o.Kind {
		return id.Kind < o.Kind
	}
	return id.Name < o.Name
}
