package search

import (
	"slices"
	"strings"
)

// reason says which of the query's words a hit matched, and where:
// "name: issue, github; description: open; server: github; related: shut
// (close)". Fields are in a fixed order; a word is listed once per field,
// in the query's own spelling.
func (ix *Index) reason(d int32, terms, words []string) string {
	doc, server := ix.docs[d], ix.servers[d]
	var byField [numFields][]string
	var related []string
	for i, t := range terms {
		tf, ok := termFields(doc, server, t)
		if !ok {
			if r := ix.relatedIn(doc, server, t); r != "" && !slices.Contains(related, words[i]+" ("+r+")") {
				related = append(related, words[i]+" ("+r+")")
			}
			continue
		}
		for f := range numFields {
			if tf[f] > 0 && !slices.Contains(byField[reasonField(f)], words[i]) {
				byField[reasonField(f)] = append(byField[reasonField(f)], words[i])
			}
		}
	}
	var b strings.Builder
	for f, ws := range byField {
		if len(ws) > 0 {
			if b.Len() > 0 {
				b.WriteString("; ")
			}
			b.WriteString(fieldNames[f] + ": " + strings.Join(ws, ", "))
		}
	}
	if len(related) > 0 {
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		b.WriteString("related: " + strings.Join(related, ", "))
	}
	return b.String()
}

// reasonField folds the fields a reader need not tell apart: a
// description's detail is its description, parameter text its parameters.
func reasonField(f int) int {
	switch f {
	case fieldDetail:
		return fieldDescription
	case fieldParamText:
		return fieldParamNames
	}
	return f
}

// termFields is a term's counts per field in a tool (its own fields and its
// server's).
func termFields(doc, server *doc, t string) ([numFields]float32, bool) {
	var tf [numFields]float32
	found := false
	if i, ok := slices.BinarySearch(doc.terms, t); ok {
		tf, found = doc.tf[i], true
	}
	if server != nil {
		if i, ok := slices.BinarySearch(server.terms, t); ok {
			tf[fieldServer], found = server.tf[i][fieldServer], true
		}
	}
	return tf, found
}

// relatedIn is the first word related to t (as the ranking weighs them)
// that the tool has, or "".
func (ix *Index) relatedIn(doc, server *doc, t string) string {
	if ix.rk.related == nil {
		return ""
	}
	for _, r := range ix.rk.related()[t] {
		w := ix.rk.synonym
		if r.kind == relDerived {
			w = ix.rk.derived
		}
		if _, ok := termFields(doc, server, r.term); ok && w > 0 {
			return r.term
		}
	}
	return ""
}
