package search

import (
	_ "embed"
	"strings"
	"sync"
)

// related.txt is the table of related words built from WordNet 3.0 by
// wordnetgen (`make generate`, when Debian's wordnet-base is installed):
// per common English word, the words sharing its most frequent sense
// (synonyms) and its derived forms (delete → deletion). Its licence is
// WORDNET-LICENSE, next to it.
//
//go:generate go run ./wordnetgen -dict /usr/share/wordnet -out related.txt
//go:embed related.txt
var relatedText string

type relation uint8

const (
	relSynonym relation = iota
	relDerived
	relSoftware // software.txt: other words for one thing in software
)

type relatedTerm struct {
	term string
	kind relation
}

// relatedTable is the table with both sides analysed as a tool's text is:
// stems, stopwords dropped, a stem related to itself never listed.
type relatedTable map[string][]relatedTerm

func parseRelated(an *analyzer) relatedTable {
	out := relatedTable{}
	parseSoftware(an, out) // first: a software sense wins over WordNet's for the same pair
	for line := range strings.Lines(relatedText) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		from := an.term(f[0])
		kind := relSynonym
		for _, w := range f[1:] {
			if w == "/" {
				kind = relDerived
				continue
			}
			out.add(from, an.term(w), kind)
		}
	}
	return out
}

// software.txt is the hand-written table of software words (its header
// says how to read it and what belongs in it).
//
//go:embed software.txt
var softwareText string

// parseSoftware adds the software table to out: the words of a line
// relate to each other, or, on a line "a b > c d", a and b to c and d.
func parseSoftware(an *analyzer, out relatedTable) {
	for line := range strings.Lines(softwareText) {
		line, _, _ = strings.Cut(line, "#")
		from, to, directed := strings.Cut(line, ">")
		left := strings.Fields(from)
		right := left
		if directed {
			right = strings.Fields(to)
		}
		for _, a := range left {
			for _, b := range right {
				out.add(an.term(a), an.term(b), relSoftware)
			}
		}
	}
}

// add relates term from to term to, once, unless either is a stopword
// (""), they are the same stem, or the pair is already there.
func (rt relatedTable) add(from, to string, kind relation) {
	if from == "" || to == "" || to == from || hasRelated(rt[from], to) {
		return
	}
	rt[from] = append(rt[from], relatedTerm{term: to, kind: kind})
}

func hasRelated(rs []relatedTerm, t string) bool {
	for _, r := range rs {
		if r.term == t {
			return true
		}
	}
	return false
}

// term is the one term of a single lowercase word, or "" for a stopword.
func (a *analyzer) term(w string) string {
	if a.stops[w] {
		return ""
	}
	return a.stem(w)
}

var defaultRelated = sync.OnceValue(func() relatedTable { return parseRelated(&textAnalyzer) })
