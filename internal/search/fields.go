package search

import (
	"encoding/json"
	"sort"
)

// The fields of a tool, in the order of fieldWeights.
const (
	fieldName = iota
	fieldDescription
	fieldParamNames
	fieldParamText
	numFields
)

// fieldWeights says how much a term in each field counts: the name is what
// the model calls and what a query most often echoes; parameter names are
// nearly as telling ("city", "repo"); parameter descriptions are long and
// generic, so they count least.
var fieldWeights = [numFields]float64{fieldName: 3, fieldDescription: 1, fieldParamNames: 1.5, fieldParamText: 0.4}

// fieldB is each field's length normalisation: names are short and of
// similar length, so a long name is barely penalised; descriptions vary
// from one line to a page, so their length matters.
var fieldB = [numFields]float64{fieldName: 0.3, fieldDescription: 0.75, fieldParamNames: 0.5, fieldParamText: 0.75}

// doc is one tool cut into terms, field by field: its distinct terms in
// byte order, each with its count per field. It depends only on the tool,
// so every view and the next revision share it (analyses).
type doc struct {
	terms []string
	tf    [][numFields]float32 // parallel to terms
	len   [numFields]int32     // terms per field
}

func analyse(name, description string, schema json.RawMessage) *doc {
	counts := map[string]*[numFields]float32{}
	var lens [numFields]int32
	var buf []string
	add := func(f int, text string) {
		buf = appendTerms(buf[:0], text)
		for _, t := range buf {
			c := counts[t]
			if c == nil {
				c = new([numFields]float32)
				counts[t] = c
			}
			c[f]++
		}
		lens[f] += int32(len(buf))
	}
	add(fieldName, name)
	add(fieldDescription, description)
	var names, texts []string
	collectParams(schema, 0, &names, &texts)
	for _, n := range names {
		add(fieldParamNames, n)
	}
	for _, t := range texts {
		add(fieldParamText, t)
	}
	d := &doc{terms: make([]string, 0, len(counts)), len: lens}
	for t := range counts {
		d.terms = append(d.terms, t)
	}
	sort.Strings(d.terms)
	d.tf = make([][numFields]float32, len(d.terms))
	for i, t := range d.terms {
		d.tf[i] = *counts[t]
	}
	return d
}

// schemaNode is the part of a JSON Schema that says what parameters mean.
type schemaNode struct {
	Description string                     `json:"description"`
	Title       string                     `json:"title"`
	Properties  map[string]json.RawMessage `json:"properties"`
	Items       json.RawMessage            `json:"items"`
	Enum        []any                      `json:"enum"`
}

// maxSchemaDepth bounds the walk into nested objects: the words that pick
// a tool are in its top-level parameters, and a hostile schema must not
// make indexing expensive.
const maxSchemaDepth = 3

// collectParams appends the property names of schema (and of nested
// objects, down to maxSchemaDepth) to names, and their descriptions, titles
// and string enum values to texts. A schema that is not valid JSON adds
// nothing: the tool is still found by its name and description.
func collectParams(schema json.RawMessage, depth int, names, texts *[]string) {
	if len(schema) == 0 || depth > maxSchemaDepth {
		return
	}
	var n schemaNode
	if json.Unmarshal(schema, &n) != nil {
		return
	}
	if depth > 0 {
		*texts = append(*texts, n.Description, n.Title)
		for _, e := range n.Enum {
			if s, ok := e.(string); ok {
				*texts = append(*texts, s)
			}
		}
	}
	keys := make([]string, 0, len(n.Properties))
	for k := range n.Properties {
		keys = append(keys, k)
	}
	sort.Strings(keys) // deterministic term order, for reproducible tests
	for _, k := range keys {
		*names = append(*names, k)
		collectParams(n.Properties[k], depth+1, names, texts)
	}
	if len(n.Items) > 0 {
		collectParams(n.Items, depth+1, names, texts)
	}
}
