package search

import (
	"container/heap"
	"math"
	"sync"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// BM25 saturation: how fast repeated occurrences stop adding score.
const k1 = 1.2

// Index ranks the tools of one registry snapshot.
type Index struct {
	snap    *registry.Snapshot
	entries []*registry.Entry
	// postings maps a term to every tool containing it, with the term's
	// whole BM25F contribution (idf included) precomputed.
	postings map[string][]posting
	analysed map[*tool.Tool]*analysed
	scratch  sync.Pool // *accumulator sized to entries
}

type posting struct {
	doc   int32
	score float32
}

// Hit is one ranked tool.
type Hit struct {
	Entry *registry.Entry
	Score float64
}

// Snapshot is the registry snapshot this index was built from.
func (ix *Index) Snapshot() *registry.Snapshot { return ix.snap }

// Build indexes every tool of snap. prev, when not nil, is the index of an
// earlier snapshot: tools that did not change reuse their analysis.
func Build(snap *registry.Snapshot, prev *Index) *Index {
	entries := snap.Entries()
	ix := &Index{snap: snap, entries: entries, postings: map[string][]posting{},
		analysed: make(map[*tool.Tool]*analysed, len(entries))}
	docs := make([]*analysed, len(entries))
	var avg [numFields]float64
	for i, e := range entries {
		var a *analysed
		if prev != nil {
			a = prev.analysed[e.Tool]
		}
		if a == nil {
			a = analyse(e.Tool.Name, e.Tool.Description, e.Tool.InputSchema)
		}
		docs[i] = a
		ix.analysed[e.Tool] = a
		for f := range numFields {
			avg[f] += float64(a.len[f])
		}
	}
	n := float64(len(entries))
	for f := range numFields {
		avg[f] = max(avg[f]/max(n, 1), 1)
	}
	df := map[string]int{}
	for _, a := range docs {
		for t := range a.tf {
			df[t]++
		}
	}
	for i, a := range docs {
		var norm [numFields]float64
		for f := range numFields {
			norm[f] = 1 - fieldB[f] + fieldB[f]*float64(a.len[f])/avg[f]
		}
		for t, tf := range a.tf {
			var w float64
			for f := range numFields {
				w += fieldWeights[f] * float64(tf[f]) / norm[f]
			}
			d := float64(df[t])
			idf := math.Log(1 + (n-d+0.5)/(d+0.5))
			ix.postings[t] = append(ix.postings[t], posting{doc: int32(i), score: float32(idf * w / (k1 + w))})
		}
	}
	ix.scratch.New = func() any { return &accumulator{score: make([]float32, len(entries))} }
	return ix
}

// accumulator sums a query's scores per tool; touched lists the tools with
// a non-zero score so resetting costs the hits, not the catalog.
type accumulator struct {
	score   []float32
	touched []int32
}

// Search returns at most k tools ranked by score, best first (ties by name),
// among those keep accepts (nil keeps all). A query with no indexed term
// returns nothing.
func (ix *Index) Search(query string, k int, keep func(*registry.Entry) bool) []Hit {
	if k <= 0 {
		return nil
	}
	terms := appendTerms(make([]string, 0, 8), query)
	acc := ix.scratch.Get().(*accumulator)
	defer func() {
		for _, d := range acc.touched {
			acc.score[d] = 0
		}
		acc.touched = acc.touched[:0]
		ix.scratch.Put(acc)
	}()
	for i, t := range terms {
		if seen(terms[:i], t) {
			continue
		}
		for _, p := range ix.postings[t] {
			if acc.score[p.doc] == 0 {
				acc.touched = append(acc.touched, p.doc)
			}
			acc.score[p.doc] += p.score
		}
	}
	top := make(hitHeap, 0, k)
	for _, d := range acc.touched {
		e := ix.entries[d]
		h := Hit{Entry: e, Score: float64(acc.score[d])}
		if len(top) == k && !better(h, top[0]) {
			continue
		}
		if keep != nil && !keep(e) {
			continue
		}
		if len(top) < k {
			heap.Push(&top, h)
		} else {
			top[0] = h
			heap.Fix(&top, 0)
		}
	}
	out := make([]Hit, len(top))
	for i := len(top) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&top).(Hit)
	}
	return out
}

func seen(terms []string, t string) bool {
	for _, s := range terms {
		if s == t {
			return true
		}
	}
	return false
}

// better orders hits: higher score first, then name in byte order, so the
// ranking is deterministic.
func better(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.Entry.Tool.Name < b.Entry.Tool.Name
}

// hitHeap is a min-heap by better: its root is the worst hit kept so far.
type hitHeap []Hit

func (h hitHeap) Len() int           { return len(h) }
func (h hitHeap) Less(i, j int) bool { return better(h[j], h[i]) }
func (h hitHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *hitHeap) Push(x any)        { *h = append(*h, x.(Hit)) }
func (h *hitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
