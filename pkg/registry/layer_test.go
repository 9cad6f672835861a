package registry_test

import (
	"slices"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/registry"
)

func TestKindOrderIsPinned(t *testing.T) {
	// DESIGN §4: debug < builtin < skill < a2a < http < native < mcp.
	want := []string{"debug", "builtin", "skill", "a2a", "http", "native", "mcp"}
	var got []string
	for _, k := range registry.Kinds() {
		got = append(got, k.String())
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Kinds() = %v, want %v", got, want)
	}
	for i, name := range want {
		k, ok := registry.ParseKind(name)
		if !ok || int(k) != i || k.String() != name {
			t.Errorf("ParseKind(%q) = %v, %v; want kind %d", name, k, ok, i)
		}
	}
	if _, ok := registry.ParseKind("MCP"); ok {
		t.Error("ParseKind is case-sensitive: MCP must not parse")
	}
	if got := registry.Kind(42).String(); got != "kind(42)" {
		t.Errorf("Kind(42).String() = %q", got)
	}
}

func TestLayerID(t *testing.T) {
	if id := registry.Layer(registry.KindBuiltin); id != (registry.LayerID{Kind: registry.KindBuiltin, Name: "builtin"}) {
		t.Errorf("Layer(builtin) = %+v", id)
	}
	if s := (registry.LayerID{Kind: registry.KindMCP, Name: "fs"}).String(); s != "mcp/fs" {
		t.Errorf("String = %q, want mcp/fs", s)
	}
}
