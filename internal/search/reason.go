package search

import "slices"

// reasonScratch is reused across the hits of one search.
type reasonScratch struct {
	tf    [][numFields]float32
	found []bool
	buf   []byte
}

// reason says which of the query's words a hit matched, and where:
// "name: issue, github; description: open; server: github; related: shut
// (close)". Fields are in a fixed order; a word is listed once per field,
// in the query's own spelling.
func (ix *Index) reason(d int32, terms, words []string, reached []reachedBy, sc *reasonScratch) string {
	doc, server := ix.docs[d], ix.servers[d]
	sc.tf, sc.found, sc.buf = sc.tf[:0], sc.found[:0], sc.buf[:0]
	for _, t := range terms {
		tf, ok := termFields(doc, server, t)
		sc.tf, sc.found = append(sc.tf, tf), append(sc.found, ok)
	}
	for f := range numFields {
		if reasonField(f) != f {
			continue
		}
		head := len(sc.buf)
		for i, w := range words {
			if !sc.found[i] || !inField(sc.tf[i], f) || listedBefore(words, sc.found, sc.tf, i, f) {
				continue
			}
			if len(sc.buf) == head {
				sc.buf = appendSep(sc.buf)
				sc.buf = append(sc.buf, fieldNames[f]+": "...)
			} else {
				sc.buf = append(sc.buf, ", "...)
			}
			sc.buf = append(sc.buf, w...)
		}
	}
	head := len(sc.buf)
	for i := range terms {
		if sc.found[i] {
			continue
		}
		if r := relatedIn(doc, server, i, reached); r != "" {
			if len(sc.buf) == head {
				sc.buf = append(appendSep(sc.buf), "related: "...)
			} else {
				sc.buf = append(sc.buf, ", "...)
			}
			sc.buf = append(append(append(append(sc.buf, words[i]...), " ("...), r...), ')')
		}
	}
	return string(sc.buf)
}

func appendSep(b []byte) []byte {
	if len(b) > 0 {
		return append(b, "; "...)
	}
	return b
}

// inField reports whether a term's counts put it in reason field f (the
// fields reasonField folds into f included).
func inField(tf [numFields]float32, f int) bool {
	for g := range numFields {
		if reasonField(g) == f && tf[g] > 0 {
			return true
		}
	}
	return false
}

// listedBefore reports whether word i was already listed under field f.
func listedBefore(words []string, found []bool, tf [][numFields]float32, i, f int) bool {
	for j := range i {
		if words[j] == words[i] && found[j] && inField(tf[j], f) {
			return true
		}
	}
	return false
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

// reachedBy is a related word of query term number i that the view's
// tools have (Index.expand walked its postings).
type reachedBy struct {
	i    int
	term string
}

// relatedIn is the first related word of query term number i that the
// tool has, or "".
func relatedIn(doc, server *doc, i int, reached []reachedBy) string {
	for _, r := range reached {
		if r.i != i {
			continue
		}
		if _, ok := termFields(doc, server, r.term); ok {
			return r.term
		}
	}
	return ""
}
