package search

import (
	"math"
	"slices"
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
	rk      *ranking
	entries []*registry.Entry // the visible tools, in the snapshot's order
	docs    []*doc            // parallel to entries
	servers []*doc            // parallel to entries: each tool's server field
	// serverSet is the distinct server fields; serverOf says which is
	// each tool's (parallel to entries).
	serverSet []*doc
	serverOf  []int32
	// postings maps a term to every visible tool containing it, with the
	// term's whole BM25F contribution (idf included) precomputed.
	postings map[string][]posting
	// plain is the plain view's postings (plain.go), nil when the ranking
	// leaves it out.
	plain   map[string][]posting
	scratch sync.Pool // *accumulator sized to entries
	semanticField
}

type posting struct {
	doc   int32
	score float32
}

// Hit is one ranked tool.
type Hit struct {
	Entry *registry.Entry
	Score float64
	// Reason is the query's words the tool matched, by field, in one
	// line ("name: issue, github; description: open"), so a model can
	// tell a good hit from a lucky one and refine its words.
	Reason string
	doc    int32 // in the index's entries
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
// Cache reuses analyses across views and revisions instead. servers says
// what each source says about itself (ServerInfo), by its layer
// (LayerID.String()); nil knows nothing beyond the layers' names.
func Build(snap *registry.Snapshot, v View, servers map[string]ServerInfo) *Index {
	return build(snap, v, &defaultRanking, servers, nil)
}

func build(snap *registry.Snapshot, v View, rk *ranking, info map[string]ServerInfo, docs *analyses) *Index {
	ix := &Index{snap: snap, rk: rk}
	sd := serverDocs{rk: rk, info: info, cache: map[registry.LayerID]*doc{}}
	for _, e := range snap.Entries() {
		if !v.shows(e) {
			continue
		}
		var d *doc
		if docs != nil {
			d = docs.get(snap.Revision(), e.Tool)
		} else {
			d = rk.an.analyse(e.Tool.Name, e.Tool.Description, e.Tool.InputSchema)
		}
		ix.entries = append(ix.entries, e)
		ix.docs = append(ix.docs, d)
		ix.addServer(sd.of(e.Layer))
	}
	ix.index()
	if rk.plain.weight > 0 {
		ix.indexPlain()
	}
	n := len(ix.entries)
	ix.scratch.New = func() any { return &accumulator{score: make([]float32, n), group: make([]float32, n)} }
	return ix
}

func (ix *Index) addServer(d *doc) {
	ix.servers = append(ix.servers, d)
	i := slices.Index(ix.serverSet, d)
	if i < 0 {
		i = len(ix.serverSet)
		ix.serverSet = append(ix.serverSet, d)
	}
	ix.serverOf = append(ix.serverOf, int32(i))
}

// mentioned reports, per server field, whether the query names it ("on
// GitHub", "in Slack"): the user who names a product means that product's
// tools.
func (ix *Index) mentioned(terms []string) []bool {
	if ix.rk.mention <= 1 {
		return nil
	}
	var out []bool
	for i, sv := range ix.serverSet {
		if sv == nil {
			continue
		}
		for _, t := range terms {
			if _, ok := slices.BinarySearch(sv.terms, t); ok {
				if out == nil {
					out = make([]bool, len(ix.serverSet))
				}
				out[i] = true
				break
			}
		}
	}
	return out
}

// index computes the postings from the visible tools alone: document
// frequencies and average field lengths are those of the view.
func (ix *Index) index() {
	n := float64(len(ix.docs))
	var avg [numFields]float64
	df := map[string]int32{}
	total := 0
	for i, d := range ix.docs {
		for f := range numFields {
			avg[f] += float64(d.len[f])
		}
		if sv := ix.servers[i]; sv != nil {
			avg[fieldServer] += float64(sv.len[fieldServer])
		}
		eachTerm(d, ix.servers[i], func(t string, _ *[numFields]float32) {
			df[t]++
			total++
		})
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
	rk := ix.rk
	for i, d := range ix.docs {
		lens := d.len
		if sv := ix.servers[i]; sv != nil {
			lens[fieldServer] = sv.len[fieldServer]
		}
		var norm [numFields]float64
		for f := range numFields {
			norm[f] = 1 - rk.b[f] + rk.b[f]*float64(lens[f])/avg[f]
		}
		eachTerm(d, ix.servers[i], func(t string, tf *[numFields]float32) {
			var w float64
			for f := range numFields {
				w += rk.weights[f] * float64(tf[f]) / norm[f]
			}
			c := float64(df[t])
			idf := math.Log(1 + (n-c+0.5)/(c+0.5))
			ix.postings[t] = append(ix.postings[t], posting{doc: int32(i), score: float32(idf * w / (k1 + w))})
		})
	}
}

// accumulator sums a query's scores per tool; touched lists the tools with
// a non-zero score so resetting costs the hits, not the catalog. group and
// grouped do the same for one query word and its related words, whose
// best score per tool counts, not their sum.
type accumulator struct {
	score, group     []float32
	touched, grouped []int32
}

// expansion is one query word's postings and its related words'.
type expansion struct {
	list   []posting
	weight float32
	term   string
}

// expand returns the postings of query term t and of its related words
// (leaving out words the query has itself: they count on their own).
func (ix *Index) expand(dst []expansion, t string, query []string) []expansion {
	dst = append(dst[:0], expansion{ix.postings[t], 1, t})
	if ix.rk.related == nil {
		return dst
	}
	for _, r := range ix.rk.related()[t] {
		w := ix.rk.synonym
		switch r.kind {
		case relDerived:
			w = ix.rk.derived
		case relSoftware:
			w = ix.rk.software
		}
		if list := ix.postings[r.term]; w > 0 && len(list) > 0 && !seen(query, r.term) {
			dst = append(dst, expansion{list, w, r.term})
		}
	}
	return dst
}

// Search returns at most k tools ranked by score, best first (ties by name),
// among those keep accepts (nil keeps all). keep narrows within the view
// (a request's own filter, such as SearchTools' sources); it never widens
// it. A query with no indexed term returns nothing.
func (ix *Index) Search(query string, k int, keep func(*registry.Entry) bool) Result {
	if k <= 0 {
		return Result{}
	}
	terms, words := ix.rk.an.appendTermsWords(make([]string, 0, 8), make([]string, 0, 8), query, true)
	acc := ix.scratch.Get().(*accumulator)
	defer func() {
		for _, d := range acc.touched {
			acc.score[d] = 0
		}
		acc.touched = acc.touched[:0]
		ix.scratch.Put(acc)
	}()
	var res Result
	var group []expansion
	var reached []reachedBy // related words this view has, for the reasons
	for i, t := range terms {
		if seen(terms[:i], t) {
			continue
		}
		group = ix.expand(group, t, terms)
		for _, x := range group[1:] {
			reached = append(reached, reachedBy{i, x.term})
		}
		tw := ix.rk.termWeight(t)
		for _, x := range group {
			res.Postings += len(x.list)
			for _, p := range x.list {
				s := tw * x.weight * p.score
				if acc.group[p.doc] == 0 {
					acc.grouped = append(acc.grouped, p.doc)
				}
				acc.group[p.doc] = max(acc.group[p.doc], s)
			}
		}
		for _, d := range acc.grouped {
			if acc.score[d] == 0 {
				acc.touched = append(acc.touched, d)
			}
			acc.score[d] += acc.group[d]
			acc.group[d] = 0
		}
		acc.grouped = acc.grouped[:0]
	}
	want := k // the lexical hits the next step takes
	if ix.embedder != nil {
		want = max(k, ix.rk.fusion.lexicalDepth)
	}
	var lexical []Hit
	if ix.rk.plain.weight > 0 {
		// Each view takes part to its fusion depth, or deeper when the
		// caller asks for more: a page of 100 is 100 hits.
		depth := max(want, ix.rk.plain.depth)
		plain, walked := ix.plainTop(query, depth, keep, acc)
		res.Postings += walked
		lexical = ix.withPlain(ix.top(acc, depth, keep, ix.mentioned(terms)), plain, want, acc)
	} else {
		lexical = ix.top(acc, want, keep, ix.mentioned(terms))
	}
	if ix.embedder == nil {
		res.Hits = lexical
	} else {
		res.Hits = ix.withSemantic(query, lexical, k, keep)
	}
	var sc reasonScratch
	for i := range res.Hits {
		if r := ix.reason(res.Hits[i].doc, terms, words, reached, &sc); r != "" {
			res.Hits[i].Reason = r
		} else if r := ix.plainReason(res.Hits[i].doc, query); r != "" {
			res.Hits[i].Reason = r
		}
	}
	return res
}

// withSemantic fuses the lexical hits with the semantic ranking when the
// embedder can give one now, and counts why when it cannot.
func (ix *Index) withSemantic(query string, lexical []Hit, k int, keep func(*registry.Entry) bool) []Hit {
	semantic, outcome := ix.semanticRank(query)
	ix.embedder.count(outcome)
	if semantic == nil {
		return lexical[:min(k, len(lexical))]
	}
	return ix.fuse(lexical, semantic, k, func(d int32) bool { return keep == nil || keep(ix.entries[d]) })
}

// top selects the k best of the scored tools that keep accepts, those of a
// server the query names counting more.
func (ix *Index) top(acc *accumulator, k int, keep func(*registry.Entry) bool, mentioned []bool) []Hit {
	best := newBestHits(k)
	for _, d := range acc.touched {
		e := ix.entries[d]
		h := Hit{Entry: e, Score: float64(acc.score[d]), doc: d}
		if mentioned != nil && mentioned[ix.serverOf[d]] {
			h.Score *= ix.rk.mention
		}
		if best.wants(h) && (keep == nil || keep(e)) {
			best.add(h)
		}
	}
	return best.sorted()
}

func seen(terms []string, t string) bool {
	for _, s := range terms {
		if s == t {
			return true
		}
	}
	return false
}

// better orders the hits of one index: higher score first, then name in
// byte order, so the ranking is deterministic. An index's tools are in the
// snapshot's order, which is by name, so the position breaks a tie as the
// name would, without comparing strings.
func better(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.doc < b.doc
}

// bestHits keeps the k best hits offered, by better: a min-heap whose root
// is the worst kept so far. Written out rather than with container/heap,
// whose any-typed Push and Pop box every Hit: an allocation each, a
// hundred per search at a fusion's depth of 50.
type bestHits struct {
	h []Hit
	k int
}

func newBestHits(k int) bestHits { return bestHits{h: make([]Hit, 0, k), k: k} }

// wants reports whether h would be kept.
func (b *bestHits) wants(h Hit) bool {
	return b.k > 0 && (len(b.h) < b.k || better(h, b.h[0]))
}

// add keeps h, dropping the worst kept when k are: call it only when
// wants(h).
func (b *bestHits) add(h Hit) {
	if len(b.h) < b.k {
		b.h = append(b.h, h)
		for i := len(b.h) - 1; i > 0; {
			p := (i - 1) / 2
			if !better(b.h[p], b.h[i]) {
				break
			}
			b.h[p], b.h[i] = b.h[i], b.h[p]
			i = p
		}
		return
	}
	b.h[0] = h
	for i, n := 0, len(b.h); ; {
		worse := 2*i + 1
		if worse >= n {
			return
		}
		if r := worse + 1; r < n && better(b.h[worse], b.h[r]) {
			worse = r
		}
		if !better(b.h[i], b.h[worse]) {
			return
		}
		b.h[i], b.h[worse] = b.h[worse], b.h[i]
		i = worse
	}
}

// sorted is the kept hits, best first.
func (b *bestHits) sorted() []Hit {
	slices.SortFunc(b.h, func(x, y Hit) int {
		if better(x, y) {
			return -1
		}
		return 1
	})
	return b.h
}
