package catalog_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/toolnexus/toolnexus/internal/catalog"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// listing is what an MCP source publishes after one tools/list of n tools:
// fresh strings and schema bytes each time (decoded anew from the wire),
// so the catalog cannot tell "unchanged" by pointer.
func listing(n int) []tool.Tool {
	hint := true
	out := make([]tool.Tool, n)
	for i := range out {
		schema := fmt.Sprintf(`{"type":"object","properties":{"path":{"type":"string","description":"The file to read, relative to the repository root (tool %d)."},`+
			`"limit":{"type":"integer","minimum":1,"maximum":10000,"description":"How many lines at most."},`+
			`"offset":{"type":"integer","minimum":0,"description":"The first line to read."}},"required":["path"],"additionalProperties":false}`, i)
		out[i] = tool.Tool{Name: fmt.Sprintf("srv_tool_%04d", i), Source: "mcp",
			Description: strings.Repeat(fmt.Sprintf("Read part of a file from the repository, tool %d. ", i), 3),
			InputSchema: bytes.Clone([]byte(schema)), Annotations: &tool.Annotations{Title: fmt.Sprint("Tool ", i), ReadOnly: &hint},
			Run: func(context.Context, tool.Call) tool.Result { return tool.Success("", nil) }}
	}
	return out
}

// BenchmarkRelist is one re-listing of 1,000 unchanged tools: into the
// registry directly ("without"), through the catalog with pinning off, and
// with pinning on (hold mode; memory and file stores: an unchanged
// re-listing touches neither). The budget is pinning ≤ 1.1× without, in
// the same run.
func BenchmarkRelist(b *testing.B) {
	const n = 1000
	lists := [2][]tool.Tool{listing(n), listing(n)}
	id := registry.LayerID{Kind: sources.KindMCP, Name: "srv"}
	quiet := slog.New(slog.DiscardHandler)
	fileStore := func(b *testing.B) catalog.Store {
		s, err := catalog.NewFileStore(filepath.Join(b.TempDir(), "pins"))
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	for _, c := range []struct {
		name  string
		store func(*testing.B) catalog.Store
		mode  catalog.Mode
	}{
		{"without", nil, ""},
		{"catalog-off", func(*testing.B) catalog.Store { return nil }, catalog.ModeOff},
		{"pinning-memory", func(*testing.B) catalog.Store { return catalog.NewMemoryStore() }, catalog.ModeHold},
		{"pinning-file", fileStore, catalog.ModeHold},
	} {
		b.Run(c.name, func(b *testing.B) {
			reg := registry.New(registry.WithLogger(quiet))
			var pub sources.Publisher = reg
			if c.store != nil {
				cat := catalog.New(reg, catalog.Options{Store: c.store(b), Logger: quiet})
				cat.Configure(catalog.Settings{Mode: c.mode})
				b.Cleanup(cat.Close)
				pub = cat
			}
			if err := pub.Replace(id, lists[1]); err != nil { // first sight: pinned
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				if err := pub.Replace(id, lists[i%2]); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if reg.Snapshot().Len() != n {
				b.Fatalf("%d tools served, want %d", reg.Snapshot().Len(), n)
			}
		})
	}
}

// BenchmarkFirstSight is a source of 1,000 tools seen for the first time:
// every definition canonicalised, hashed and pinned (memory store).
func BenchmarkFirstSight(b *testing.B) {
	list := listing(1000)
	quiet := slog.New(slog.DiscardHandler)
	b.ReportAllocs()
	for range b.N {
		reg := registry.New(registry.WithLogger(quiet))
		cat := catalog.New(reg, catalog.Options{Store: catalog.NewMemoryStore(), Logger: quiet})
		cat.Configure(catalog.Settings{Mode: catalog.ModeHold})
		if err := cat.Replace(registry.LayerID{Kind: sources.KindMCP, Name: "srv"}, list); err != nil {
			b.Fatal(err)
		}
		cat.Close()
	}
}

// BenchmarkRelistRatio re-lists 1,000 unchanged tools into the registry
// directly and through the catalog with pinning on, alternately (each
// first in turn), and reports the ratio of the CPU time this thread spent
// in each ("x-without"): on a shared machine the two see the same load
// and time spent descheduled counts for neither, so the ratio holds where
// wall-clock times do not. The budget is x-without ≤ 1.1.
func BenchmarkRelistRatio(b *testing.B) {
	const n = 1000
	lists := [2][]tool.Tool{listing(n), listing(n)}
	id := registry.LayerID{Kind: sources.KindMCP, Name: "srv"}
	quiet := slog.New(slog.DiscardHandler)
	plain := registry.New(registry.WithLogger(quiet))
	pinnedReg := registry.New(registry.WithLogger(quiet))
	cat := catalog.New(pinnedReg, catalog.Options{Store: catalog.NewMemoryStore(), Logger: quiet})
	cat.Configure(catalog.Settings{Mode: catalog.ModeHold})
	b.Cleanup(cat.Close)
	for _, p := range []sources.Publisher{plain, cat} {
		if err := p.Replace(id, lists[1]); err != nil {
			b.Fatal(err)
		}
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var spent [2]time.Duration // without, with
	pubs := [2]sources.Publisher{plain, cat}
	b.ResetTimer()
	for i := range b.N {
		for k := range 2 {
			which := (i + k) % 2
			start := threadCPU()
			if err := pubs[which].Replace(id, lists[i%2]); err != nil {
				b.Fatal(err)
			}
			spent[which] += threadCPU() - start
		}
	}
	b.ReportMetric(float64(spent[1])/float64(spent[0]), "x-without")
	b.ReportMetric(float64(spent[0].Nanoseconds())/float64(b.N), "cpu-ns-without/op")
	b.ReportMetric(float64(spent[1].Nanoseconds())/float64(b.N), "cpu-ns-pinned/op")
}

// threadCPU is the CPU time of the calling OS thread.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		panic(err)
	}
	return time.Duration(ts.Nano())
}
