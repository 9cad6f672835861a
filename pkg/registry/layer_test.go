package registry_test

import (
	"testing"

	"github.com/toolnexus/toolnexus/pkg/registry"
)

func TestLayersOrderByPrecedence(t *testing.T) {
	t.Parallel()
	low := registry.LayerID{Kind: registry.Kind{Name: "zeta", Precedence: 1}, Name: "b"}
	high := registry.LayerID{Kind: registry.Kind{Name: "alpha", Precedence: 2}, Name: "a"}
	if low.Compare(high) != -1 || high.Compare(low) != 1 || low.Compare(low) != 0 {
		t.Fatalf("precedence must order layers, not kind names: %d %d", low.Compare(high), high.Compare(low))
	}
	sameKindA := registry.LayerID{Kind: kindMCP, Name: "a"}
	sameKindB := registry.LayerID{Kind: kindMCP, Name: "b"}
	if sameKindA.Compare(sameKindB) != -1 {
		t.Error("within a kind, layers order by name")
	}
}

func TestLayerID(t *testing.T) {
	t.Parallel()
	if id := registry.Layer(kindBuiltin); id != (registry.LayerID{Kind: kindBuiltin, Name: "builtin"}) {
		t.Errorf("Layer(builtin) = %+v", id)
	}
	if s := (registry.LayerID{Kind: kindMCP, Name: "fs"}).String(); s != "mcp/fs" {
		t.Errorf("String = %q, want mcp/fs", s)
	}
}
