package search

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/search/searchtest"
	"github.com/toolnexus/toolnexus/pkg/registry"
)

func benchQueries(b *testing.B) []string {
	raw, err := os.ReadFile("searchtest/queries.json")
	if err != nil {
		b.Fatal(err)
	}
	var doc struct{ Queries []struct{ Query string } }
	if err := json.Unmarshal(raw, &doc); err != nil {
		b.Fatal(err)
	}
	out := make([]string, len(doc.Queries))
	for i, q := range doc.Queries {
		out[i] = q.Query
	}
	return out
}

// BenchmarkSearch is one SearchTools ranking (top 10, with a visibility
// filter that keeps everything, as for an unrestricted caller) over the
// catalog grown to n tools, cycling through the 50 recall queries. Besides
// the mean it reports the median (p50-ns): the budget is 1 ms at 10,000.
func BenchmarkSearch(b *testing.B) {
	queries := benchQueries(b)
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			r := registry.New()
			if err := r.Replace(layer, searchtest.Tools(n)); err != nil {
				b.Fatal(err)
			}
			ix := Build(r.Snapshot(), nil)
			keep := func(*registry.Entry) bool { return true }
			times := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if len(ix.Search(queries[i%len(queries)], 10, keep)) == 0 {
					b.Fatal("no hits")
				}
				times = append(times, time.Since(t0))
			}
			b.StopTimer()
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(times[len(times)*99/100].Nanoseconds()), "p99-ns")
		})
	}
}

// BenchmarkBuild is building the index of a new revision from scratch (the
// first search after a reload pays it once), and rebuilding it when only
// nothing changed (every analysis is reused: what a reload that touched
// another source costs).
func BenchmarkBuild(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		tools := searchtest.Tools(n)
		r := registry.New()
		if err := r.Replace(layer, tools); err != nil {
			b.Fatal(err)
		}
		snap := r.Snapshot()
		b.Run(fmt.Sprintf("scratch/tools=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				Build(snap, nil)
			}
		})
		b.Run(fmt.Sprintf("unchanged/tools=%d", n), func(b *testing.B) {
			prev := Build(snap, nil)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				Build(snap, prev)
			}
		})
	}
}
