package search

import (
	"container/heap"
	"math"
	"sync"

	"github.com/toolnexus/toolnexus/pkg/registry"
)

// BM25 saturation: how fast repeated occurrences stop adding score.
const k1 = 1.2

// Index ranks the tools one view shows of one registry snapshot. It holds
// nothing about the tools the view hides: not their terms, not their
// counts.
type Index struct {
	snap    *registry.Snapshot
	entries []*registry.Entry // the visible tools, in the snapshot's order
	docs    []*doc            // parallel to entries
	// postings maps a term to every visible tool containing it, with the
	// term's whole BM25F contribution (idf included) precomputed.
	postings map[string][]posting
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

// Result is a ranking and the work it took.
type Result struct {
	Hits []Hit
	// Postings is how many postings the query walked: the work of the
	// search, counted rather than timed. It depends only on the tools the
	// view shows.
	Postings int
}

// Snapshot is the registry snapshot this index was built from.
func (ix *Index) Snapshot() *registry.Snapshot { return ix.snap }

// Len is the number of tools the index ranks: those its view shows.
func (ix *Index) Len() int { return len(ix.entries) }

// Build indexes the tools of snap that v shows, analysing each afresh; a
// Cache reuses analyses across views and revisions instead.
func Build(snap *registry.Snapshot, v View) *Index {
	return build(snap, v, nil)
}

func build(snap *registry.Snapshot, v View, docs *analyses) *Index {
	ix := &Index{snap: snap}
	for _, e := range snap.Entries() {
		if !v.shows(e) {
			continue
		}
		var d *doc
		if docs != nil {
			d = docs.get(snap.Revision(), e.Tool)
		} else {
			d = analyse(e.Tool.Name, e.Tool.Description, e.Tool.InputSchema)
		}
		ix.entries = append(ix.entries, e)
		ix.docs = append(ix.docs, d)
	}
	ix.index()
	n := len(ix.entries)
	ix.scratch.New = func() any { return &accumulator{score: make([]float32, n)} }
	return ix
}

// index computes the postings from the visible tools alone: document
// frequencies and average field lengths are those of the view.
func (ix *Index) index() {
	n := float64(len(ix.docs))
	var avg [numFields]float64
	df := map[string]int32{}
	total := 0
	for _, d := range ix.docs {
		for f := range numFields {
			avg[f] += float64(d.len[f])
		}
		for _, t := range d.terms {
			df[t]++
		}
		total += len(d.terms)
	}
	for f := range numFields {
		avg[f] = max(avg[f]/max(n, 1), 1)
	}
	// One backing array for every posting list: each list gets exactly its
	// document frequency as capacity, so filling them allocates nothing.
	slab := make([]posting, total)
	ix.postings = make(map[string][]posting, len(df))
	off := 0
	for t, c := range df {
		ix.postings[t] = slab[off : off : off+int(c)]
		off += int(c)
	}
	for i, d := range ix.docs {
		var norm [numFields]float64
		for f := range numFields {
			norm[f] = 1 - fieldB[f] + fieldB[f]*float64(d.len[f])/avg[f]
		}
		for j, t := range d.terms {
			var w float64
			for f := range numFields {
				w += fieldWeights[f] * float64(d.tf[j][f]) / norm[f]
			}
			c := float64(df[t])
			idf := math.Log(1 + (n-c+0.5)/(c+0.5))
			ix.postings[t] = append(ix.postings[t], posting{doc: int32(i), score: float32(idf * w / (k1 + w))})
		}
	}
}

// accumulator sums a query's scores per tool; touched lists the tools with
// a non-zero score so resetting costs the hits, not the catalog.
type accumulator struct {
	score   []float32
	touched []int32
}

// Search returns at most k tools ranked by score, best first (ties by name),
// among those keep accepts (nil keeps all). keep narrows within the view
// (a request's own filter, such as SearchTools' sources); it never widens
// it. A query with no indexed term returns nothing.
func (ix *Index) Search(query string, k int, keep func(*registry.Entry) bool) Result {
	if k <= 0 {
		return Result{}
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
	var res Result
	for i, t := range terms {
		if seen(terms[:i], t) {
			continue
		}
		list := ix.postings[t]
		res.Postings += len(list)
		for _, p := range list {
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
	res.Hits = make([]Hit, len(top))
	for i := len(top) - 1; i >= 0; i-- {
		res.Hits[i] = heap.Pop(&top).(Hit)
	}
	return res
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
