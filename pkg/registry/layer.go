package registry

// Kind is a source kind: the name it is shown and configured by, and its
// precedence. The registry knows no particular source; the kinds this project
// ships are declared by package sources, and an embedder may add its own.
//
// Layers are ordered by precedence, lowest first: a tool in a layer of higher
// precedence shadows a same-named tool in a lower one ("later wins"). Two
// kinds should not share a precedence; if they do, the name breaks the tie.
type Kind struct {
	Name       string
	Precedence int
}

// String is the kind's config and metrics name.
func (k Kind) String() string { return k.Name }

func (k Kind) less(o Kind) bool {
	if k.Precedence != o.Precedence {
		return k.Precedence < o.Precedence
	}
	return k.Name < o.Name
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

// Compare orders layers by precedence, lowest first: -1 when id comes
// before o (and loses a name collision to it), 0 when equal, +1 after.
func (id LayerID) Compare(o LayerID) int {
	switch {
	case id == o:
		return 0
	case id.less(o):
		return -1
	}
	return 1
}

func (id LayerID) less(o LayerID) bool {
	if id.Kind != o.Kind {
		return id.Kind.less(o.Kind)
	}
	return id.Name < o.Name
}
