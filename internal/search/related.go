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
	for line := range strings.Lines(relatedText) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		from := an.term(f[0])
		if from == "" {
			continue
		}
		kind := relSynonym
		for _, w := range f[1:] {
			if w == "/" {
				kind = relDerived
				continue
			}
			to := an.term(w)
			if to == "" || to == from || hasRelated(out[from], to) {
				continue
			}
			out[from] = append(out[from], relatedTerm{term: to, kind: kind})
		}
	}
	return out
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
