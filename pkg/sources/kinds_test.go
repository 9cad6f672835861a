package sources_test

import (
	"slices"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
)

// The precedence order is part of the public contract:
// debug < builtin < skill < a2a < http < native < mcp.
func TestKindOrderIsPinned(t *testing.T) {
	t.Parallel()
	want := []string{"debug", "builtin", "skill", "a2a", "http", "native", "mcp"}
	var got []string
	for _, k := range sources.Kinds() {
		got = append(got, k.String())
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Kinds() = %v, want %v", got, want)
	}
	ids := make([]registry.LayerID, 0, len(want))
	for i := len(want) - 1; i >= 0; i-- {
		k, ok := sources.ParseKind(want[i])
		if !ok || k.String() != want[i] {
			t.Fatalf("ParseKind(%q) = %v, %v", want[i], k, ok)
		}
		ids = append(ids, registry.Layer(k))
	}
	slices.SortFunc(ids, registry.LayerID.Compare)
	for i, id := range ids {
		if id.Kind.Name != want[i] {
			t.Fatalf("sorted layers %v, want kinds in order %v", ids, want)
		}
	}
	if _, ok := sources.ParseKind("MCP"); ok {
		t.Error("ParseKind is case-sensitive: MCP must not parse")
	}
}
