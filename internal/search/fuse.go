package search

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
)

// fusion is how the semantic ranking joins the lexical one: reciprocal
// rank fusion, a tool's fused score being the sum over the two rankings of
// weight/(k + its rank), so agreeing rankings reinforce each other and
// neither's raw scores need calibrating.
type fusion struct {
	k                 float64
	lexical, semantic float64 // each ranking's weight
	// lexicalDepth and semanticDepth are how many of each ranking take
	// part.
	lexicalDepth, semanticDepth int
}

// semanticVectors are the vectors of an index's tools, in entries order,
// once every visible tool has one; nil until then.
type semanticVectors struct {
	vecs [][]float32
}

// vectorsOf returns the index's vectors, assembling them from the
// embedder's store the first time they are all there.
func (ix *Index) vectorsOf(e *Embedder) [][]float32 {
	if sv := ix.semantic.Load(); sv != nil {
		return sv.vecs
	}
	vecs := make([][]float32, len(ix.entries))
	e.mu.RLock()
	for i, en := range ix.entries {
		d, ok := e.digests[en.Tool]
		if !ok {
			e.mu.RUnlock()
			return nil
		}
		if vecs[i] = e.vectors[d]; vecs[i] == nil {
			e.mu.RUnlock()
			return nil
		}
	}
	e.mu.RUnlock()
	ix.semantic.Store(&semanticVectors{vecs: vecs})
	return vecs
}

// queryVector is the query's vector: from the embedder's cache, else asked
// of the endpoint within QueryTimeout. Cached per view key, so one view's
// searches tell nothing about another's.
func (e *Embedder) queryVector(viewKey, query string) ([]float32, string) {
	key := viewKey + "\x00" + query
	e.mu.RLock()
	v := e.queries[key]
	e.mu.RUnlock()
	if v != nil {
		return v, EmbedUsed
	}
	ctx, cancel := context.WithTimeout(e.ctx, e.opts.QueryTimeout)
	defer cancel()
	vecs, err := e.embed(ctx, []string{e.opts.QueryPrefix + query})
	if err != nil {
		outcome := EmbedError
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			outcome = EmbedTimeout
		}
		if !e.down.Swap(true) {
			e.log.Warn("embeddings endpoint failing: searches rank lexically until it answers", "error", err)
		}
		e.poke() // the worker probes until it answers again
		return nil, outcome
	}
	e.mu.Lock()
	if len(e.queries) >= maxQueryVectors {
		clear(e.queries)
	}
	e.queries[key] = vecs[0]
	e.mu.Unlock()
	return vecs[0], EmbedUsed
}

// semanticRank is the index's tools by similarity to the query, best
// first (at most the fusion's semanticDepth), or nil with why the semantic side was left
// out.
func (ix *Index) semanticRank(query string) ([]int32, string) {
	e := ix.embedder
	if e.down.Load() {
		return nil, EmbedUnavailable
	}
	vecs := ix.vectorsOf(e)
	if vecs == nil {
		return nil, EmbedNotReady
	}
	q, outcome := e.queryVector(ix.viewKey, query)
	if q == nil {
		return nil, outcome
	}
	return topSimilar(vecs, q, ix.rk.fusion.semanticDepth), EmbedUsed
}

// scored is a tool's similarity to the query.
type scored struct {
	doc int32
	sim float32
}

// topSimilar is the depth tools most similar to q, best first (ties by
// position). It keeps only the best depth while it scans, in order, so a
// search over 10,000 tools neither allocates nor sorts 10,000 entries.
func topSimilar(vecs [][]float32, q []float32, depth int) []int32 {
	top := make([]scored, 0, depth+1)
	for i, v := range vecs {
		if len(v) != len(q) {
			continue
		}
		s := dot(v, q)
		if len(top) == depth && (depth == 0 || s <= top[depth-1].sim) {
			continue
		}
		at := len(top)
		for at > 0 && top[at-1].sim < s {
			at--
		}
		top = slices.Insert(top, at, scored{int32(i), s})
		if len(top) > depth {
			top = top[:depth]
		}
	}
	out := make([]int32, len(top))
	for i, s := range top {
		out[i] = s.doc
	}
	return out
}

// dot is the dot product of two vectors of one length (unit vectors: their
// cosine similarity), in four sums the CPU can run side by side.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// fuse merges the lexical hits (best first, at most lexicalDepth) and the
// semantic ranking by reciprocal rank fusion, keeping k of the tools keep
// accepts. A tool the semantic side alone found says so in its reason.
func (ix *Index) fuse(lexical []Hit, semantic []int32, k int, keep func(int32) bool) []Hit {
	f := ix.rk.fusion
	if w := ix.embedder.opts.Weight; w > 0 {
		f.semantic = w
	}
	score := map[int32]float64{}
	byDoc := map[int32]Hit{}
	for r, h := range lexical {
		if ix.rk.plain.weight > 0 {
			// Already a reciprocal rank fusion (of the fielded ranking and
			// the plain view, same k): the semantic ranking joins it as a
			// third, rather than fusing a fusion's ranks.
			score[h.doc] += h.Score
		} else {
			score[h.doc] += f.lexical / (f.k + float64(r+1))
		}
		byDoc[h.doc] = h
	}
	for r, d := range semantic {
		if !keep(d) {
			continue
		}
		score[d] += f.semantic / (f.k + float64(r+1))
		if _, ok := byDoc[d]; !ok {
			byDoc[d] = Hit{Entry: ix.entries[d], doc: d, Reason: "meaning (embeddings)"}
		}
	}
	out := make([]Hit, 0, len(byDoc))
	for d, h := range byDoc {
		h.Score = score[d]
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b Hit) int {
		if better(a, b) {
			return -1
		}
		return 1
	})
	return out[:min(k, len(out))]
}

// semanticField is the Index's part of the semantic side.
type semanticField struct {
	embedder *Embedder
	viewKey  string
	semantic atomic.Pointer[semanticVectors]
}
