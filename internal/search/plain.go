package search

import (
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/toolnexus/toolnexus/pkg/registry"
)

// The plain view: a second lexical ranking over each tool's name and
// description as one text, cut at every character that is not a letter or
// a digit and lowercased — no fields, no stemming, no related words; only
// the query's stopwords are left out — scored by BM25 and fused with the
// fielded ranking by reciprocal rank fusion. The two err differently: the
// fielded ranking lets a name's incidental word (weighed 3) or a related
// word carry a tool; the plain view counts only the user's own words,
// wherever the tool's text has them, and misses what analysis would have
// found (a camelCase name such as listDeploymentFiles stays one word).
// Chosen on every evaluation split at once (385 tasks) and measured once on
// a split built afterwards (BENCHMARKS.md, "The plain view").

// plainCounts is a tool's plain view: its distinct words in byte order,
// each with its count, and its length in words.
type plainCounts struct {
	words []string
	tf    []float32
	len   int32
}

// appendPlainWords appends the plain words of s: lowercased runs of
// letters and digits.
func appendPlainWords(dst []string, s string) []string {
	start := -1
	for i, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			dst = append(dst, strings.ToLower(s[start:i]))
			start = -1
		}
	}
	if start >= 0 {
		dst = append(dst, strings.ToLower(s[start:]))
	}
	return dst
}

func plainOf(name, description string) plainCounts {
	words := appendPlainWords(appendPlainWords(nil, name), description)
	p := plainCounts{len: int32(len(words))}
	slices.Sort(words)
	for i, w := range words {
		if i > 0 && w == words[i-1] {
			p.tf[len(p.tf)-1]++
			continue
		}
		p.words = append(p.words, w)
		p.tf = append(p.tf, 1)
	}
	return p
}

// indexPlain computes the plain view's postings (BM25, k1 1.2, b 0.75) from
// the visible tools alone.
func (ix *Index) indexPlain() {
	n := float64(len(ix.docs))
	df := map[string]int32{}
	var total, avg float64
	for _, d := range ix.docs {
		for _, w := range d.plain.words {
			df[w]++
			total++
		}
		avg += float64(d.plain.len)
	}
	avg = max(avg/max(n, 1), 1)
	slab := make([]posting, int(total))
	ix.plain = make(map[string][]posting, len(df))
	off := 0
	for w, c := range df {
		ix.plain[w] = slab[off : off : off+int(c)]
		off += int(c)
	}
	for i, d := range ix.docs {
		norm := 1 - 0.75 + 0.75*float64(d.plain.len)/avg
		for j, w := range d.plain.words {
			tf := float64(d.plain.tf[j])
			c := float64(df[w])
			idf := math.Log(1 + (n-c+0.5)/(c+0.5))
			ix.plain[w] = append(ix.plain[w], posting{doc: int32(i), score: float32(idf * tf * (k1 + 1) / (tf + k1*norm))})
		}
	}
}

// plainTop is the plain view's best depth tools for query among those keep
// accepts, best first; acc's group scratch holds the scores meanwhile.
func (ix *Index) plainTop(query string, depth int, keep func(*registry.Entry) bool, acc *accumulator) ([]int32, int) {
	words := appendPlainWords(make([]string, 0, 8), query)
	// A stopword alone never finds a tool, in either view: a query of
	// stopwords returns nothing.
	words = slices.DeleteFunc(words, func(w string) bool { return ix.rk.an.stops[w] })
	slices.Sort(words)
	words = slices.Compact(words)
	walked := 0
	for _, w := range words {
		list := ix.plain[w]
		walked += len(list)
		for _, p := range list {
			if acc.group[p.doc] == 0 {
				acc.grouped = append(acc.grouped, p.doc)
			}
			acc.group[p.doc] += p.score
		}
	}
	best := newBestHits(depth)
	for _, d := range acc.grouped {
		h := Hit{Score: float64(acc.group[d]), doc: d}
		acc.group[d] = 0
		if best.wants(h) && (keep == nil || keep(ix.entries[d])) {
			best.add(h)
		}
	}
	acc.grouped = acc.grouped[:0]
	hits := best.sorted()
	out := make([]int32, len(hits))
	for i, h := range hits {
		out[i] = h.doc
	}
	return out, walked
}

// withPlain fuses the fielded hits with the plain view's ranking: each
// tool scores 1/(k + its fielded rank) + weight/(k + its plain rank), over
// the top depth of each, and the best n are kept. acc's group scratch
// holds the sums (no map on the search path).
func (ix *Index) withPlain(fielded []Hit, plain []int32, n int, acc *accumulator) []Hit {
	f := ix.rk.plain
	add := func(d int32, s float64) {
		if acc.group[d] == 0 {
			acc.grouped = append(acc.grouped, d)
		}
		acc.group[d] += float32(s)
	}
	for r, h := range fielded {
		add(h.doc, 1/(f.k+float64(r+1)))
	}
	for r, d := range plain {
		add(d, f.weight/(f.k+float64(r+1)))
	}
	out := make([]Hit, 0, len(acc.grouped))
	for _, d := range acc.grouped {
		out = append(out, Hit{Entry: ix.entries[d], Score: float64(acc.group[d]), doc: d})
		acc.group[d] = 0
	}
	acc.grouped = acc.grouped[:0]
	slices.SortFunc(out, func(a, b Hit) int {
		if better(a, b) {
			return -1
		}
		return 1
	})
	return out[:min(n, len(out))]
}

// plainReason is the reason of a hit the plain view alone found: the
// query's words its name or description has as written ("words: sankey").
func (ix *Index) plainReason(d int32, query string) string {
	if ix.plain == nil {
		return ""
	}
	var b strings.Builder
	seenWords := make([]string, 0, 8)
	for _, w := range appendPlainWords(nil, query) {
		if ix.rk.an.stops[w] || slices.Contains(seenWords, w) {
			continue
		}
		seenWords = append(seenWords, w)
		if _, ok := slices.BinarySearch(ix.docs[d].plain.words, w); !ok {
			continue
		}
		if b.Len() == 0 {
			b.WriteString("words: ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(w)
	}
	return b.String()
}
