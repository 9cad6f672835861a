package registry_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// manyTools is n trivial tools named t00000 ... t(n-1), not in name order
// (sources list tools in their own order, so the registry must sort).
func manyTools(n int) []tool.Tool {
	tools := make([]tool.Tool, n)
	for i := range tools {
		name := "t" + strconv.Itoa(100000 + i*7919%n)[1:] // 7919 is prime: a permutation unless n is a multiple of it
		tools[i] = tool.Tool{
			Name:        name,
			Description: "tool " + name,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}}}`),
			Run:         okRun,
		}
	}
	return tools
}

var okResult = tool.Success("ok", nil)

func okRun(context.Context, tool.Call) tool.Result { return okResult }

// benchRegistry has 1,000 tools spread over several layers, one of them
// shadowed, as a realistic lookup table.
func benchRegistry(b *testing.B) *registry.Registry {
	r := registry.New()
	all := manyTools(1000)
	mustReplace(b, r, registry.Layer(kindBuiltin), all[:100])
	mustReplace(b, r, registry.LayerID{Kind: kindMCP, Name: "a"}, all[100:600])
	mustReplace(b, r, registry.LayerID{Kind: kindMCP, Name: "b"}, all[600:])
	mustReplace(b, r, registry.Layer(kindNative), []tool.Tool{{Name: "echo", Run: okRun}, all[50]})
	return r
}

// BenchmarkLookup is the registry's share of resolving a name: an atomic
// load and a map lookup. The target is zero allocations.
func BenchmarkLookup(b *testing.B) {
	r := benchRegistry(b)
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := r.Snapshot().Lookup("echo"); !ok {
				b.Fatal("echo not found")
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, ok := r.Snapshot().Lookup("t00500"); !ok {
					b.Fatal("t00500 not found")
				}
			}
		})
	})
	b.Run("unknown", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = r.Snapshot().Lookup("nope")
		}
	})
}

func TestLookupDoesNotAllocate(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation count")
	}
	r := registry.New()
	mustReplace(t, r, registry.Layer(kindNative), []tool.Tool{{Name: "echo", Run: okRun}})
	if n := testing.AllocsPerRun(1000, func() { _, _ = r.Snapshot().Lookup("echo") }); n != 0 {
		t.Errorf("Lookup allocates %v times per call, want 0", n)
	}
}

// BenchmarkReplace rebuilds and publishes a 10,000-tool layer next to a
// small one: the cost of one MCP server refreshing a very large tool list.
func BenchmarkReplace(b *testing.B) {
	r := registry.New()
	mustReplace(b, r, registry.Layer(kindBuiltin), manyTools(10))
	tools := manyTools(10000)
	id := registry.LayerID{Kind: kindMCP, Name: "big"}
	b.ReportAllocs()
	for b.Loop() {
		if err := r.Replace(id, tools); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10000, "ns/tool")
}

// BenchmarkSnapshotEntries walks the precomputed sorted list of a
// 10,000-tool snapshot, as ListTools does, and pages through it with Seek.
func BenchmarkSnapshotEntries(b *testing.B) {
	r := registry.New()
	mustReplace(b, r, registry.Layer(kindMCP), manyTools(10000))
	b.Run("walk", func(b *testing.B) {
		b.ReportAllocs()
		var n int
		for b.Loop() {
			for _, e := range r.Snapshot().Entries() {
				n += len(e.Tool.Name)
			}
		}
		if n == 0 {
			b.Fatal("no entries")
		}
	})
	b.Run("page", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s := r.Snapshot()
			i := s.Seek("t04999")
			if page := s.Entries()[i:min(i+1000, s.Len())]; page[0].Tool.Name != "t05000" {
				b.Fatal(page[0].Tool.Name)
			}
		}
	})
	b.Run("lookup", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := r.Snapshot().Lookup("t07777"); !ok {
				b.Fatal("missing")
			}
		}
	})
}
