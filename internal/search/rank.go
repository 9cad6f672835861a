package search

import "github.com/toolnexus/toolnexus/pkg/registry"

// ranking is everything that decides a score. One value is in use
// (defaultRanking); the evaluation builds others to measure what each of
// its parts contributes (eval_test.go).
type ranking struct {
	an *analyzer
	// weights says how much a term in each field counts: the name is what
	// the model calls and what a query most often echoes; parameter names
	// are nearly as telling ("city", "repo"); parameter descriptions are
	// long and generic, so they count least; the server's words (its key,
	// its product name) say which product a tool belongs to, not what it
	// does.
	weights [numFields]float64
	// b is each field's length normalisation: names are short and of
	// similar length, so a long name is barely penalised; descriptions vary
	// from one line to a page, so their length matters.
	b [numFields]float64
	// servers adds the server field (ServerInfo) to every tool.
	servers bool
	// mention multiplies the score of the tools of a server the query
	// names (1 = no boost).
	mention float64
	// related is the table of related words; a query word also matches
	// its related words, at most at these fractions of their own score,
	// and only where the word itself scores less: a tool that has the
	// query's word gains nothing from its synonyms, so they never swamp
	// an exact match (0 turns a kind off).
	related          func() relatedTable
	synonym, derived float32
	// software is the fraction for the software table's words: a closer
	// match than WordNet's (they are other names for the very thing a tool
	// acts on), still below the exact word.
	software float32
	// light is what a light verb of the query counts (1 = as any word).
	light float32
	// fusion joins the semantic side's ranking, when there is one. Chosen
	// on the evaluation's tuning split with a sentence encoder
	// (eval_embed_test.go): the semantic ranking at a quarter of the
	// lexical one's weight, with RRF's k at 10, reorders the lexical
	// candidates and lifts a few it missed; at equal weights it pulled good
	// lexical answers down.
	fusion fusion
	// plain is how the plain view (plain.go) joins the fielded ranking;
	// weight 0 leaves it out.
	plain plainFusion
}

// plainFusion is the plain view's part in the lexical ranking: its weight
// in the reciprocal rank fusion (the fielded ranking's being 1), RRF's k,
// and how many of each ranking take part.
type plainFusion struct {
	weight, k float64
	depth     int
}

// lightVerbs are the verbs English pairs with a noun that carries the
// meaning — take a look, give a thumbs up, get a copy, put it up for
// review, keep track, bring up to date: in a request they say little of
// the operation, while a tool whose name happens to start with one
// (take_screenshot, give_feedback) would match them at a name's weight.
var lightVerbs = setOf("take", "give", "get", "put", "go", "keep", "bring", "got", "took", "gave", "brought", "kept")

func (rk *ranking) termWeight(t string) float32 {
	if rk.light != 1 && lightVerbs[t] {
		return rk.light
	}
	return 1
}

var defaultRanking = ranking{
	an:       &textAnalyzer,
	weights:  [numFields]float64{fieldName: 3, fieldDescription: 1, fieldDetail: 1, fieldParamNames: 1.5, fieldParamText: 0.4, fieldServer: 0.5},
	b:        [numFields]float64{fieldName: 0.3, fieldDescription: 0.75, fieldDetail: 0.75, fieldParamNames: 0.5, fieldParamText: 0.75, fieldServer: 0.3},
	servers:  true,
	mention:  2,
	related:  defaultRelated,
	synonym:  0.2,
	derived:  0.4,
	software: 0.5,
	light:    0.5,
	fusion:   fusion{k: 10, lexical: 1, semantic: DefaultEmbedWeight, lexicalDepth: 50, semanticDepth: 50},
	plain:    plainFusion{weight: 0.5, k: 10, depth: 50},
}

// serverDocs analyses each layer's server field once per build.
type serverDocs struct {
	rk    *ranking
	info  map[string]ServerInfo // by LayerID.String()
	cache map[registry.LayerID]*doc
}

func (s *serverDocs) of(id registry.LayerID) *doc {
	if !s.rk.servers {
		return nil
	}
	d, ok := s.cache[id]
	if !ok {
		d = s.rk.an.analyseServer(id.Name, s.info[id.String()])
		s.cache[id] = d
	}
	return d
}

// eachTerm calls fn for every term of a tool with its counts in every
// field: the tool's own fields merged with its server's (both in byte
// order).
func eachTerm(d, server *doc, fn func(term string, tf *[numFields]float32)) {
	i, j := 0, 0
	for i < len(d.terms) || server != nil && j < len(server.terms) {
		switch {
		case server == nil || j >= len(server.terms) || i < len(d.terms) && d.terms[i] < server.terms[j]:
			fn(d.terms[i], &d.tf[i])
			i++
		case i >= len(d.terms) || server.terms[j] < d.terms[i]:
			fn(server.terms[j], &server.tf[j])
			j++
		default:
			tf := d.tf[i]
			tf[fieldServer] = server.tf[j][fieldServer]
			fn(d.terms[i], &tf)
			i, j = i+1, j+1
		}
	}
}
