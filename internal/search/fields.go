package search

import (
	"encoding/json"
	"sort"
	"strings"
)

// The fields of a tool, in the order of fieldWeights.
const (
	fieldName = iota
	fieldDescription
	fieldDetail
	fieldParamNames
	fieldParamText
	fieldServer
	numFields
)

// fieldNames name the fields in a hit's reason.
var fieldNames = [numFields]string{fieldName: "name", fieldDescription: "description", fieldDetail: "description", fieldParamNames: "parameters",
	fieldParamText: "parameter text", fieldServer: "server"}

// doc is one tool cut into terms, field by field: its distinct terms in
// byte order, each with its count per field. It depends only on the tool,
// so every view and the next revision share it (analyses).
type doc struct {
	terms []string
	tf    [][numFields]float32 // parallel to terms
	len   [numFields]int32     // terms per field
	plain plainCounts          // the plain view (plain.go)
}

func (a *analyzer) analyse(name, description string, schema json.RawMessage) *doc {
	counts := map[string]*[numFields]float32{}
	var lens [numFields]int32
	var buf []string
	add := func(f int, text string) {
		buf = a.appendTerms(buf[:0], text)
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
	summary, detail := splitSummary(description)
	add(fieldDescription, summary)
	add(fieldDetail, detail)
	var names, texts []string
	collectParams(schema, 0, &names, &texts)
	for _, n := range names {
		add(fieldParamNames, n)
	}
	for _, t := range texts {
		add(fieldParamText, t)
	}
	d := newDoc(counts, lens)
	d.plain = plainOf(name, description)
	return d
}

func newDoc(counts map[string]*[numFields]float32, lens [numFields]int32) *doc {
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

// analyseServer is the server field of every tool a source serves: its
// layer's name (the mcpServers key) and what the source says about itself.
// "MCP" and "server" are in every server's description and tell nothing.
func (a *analyzer) analyseServer(layer string, info ServerInfo) *doc {
	counts := map[string]*[numFields]float32{}
	var lens [numFields]int32
	for _, text := range []string{layer, info.Name, info.Title, info.Description} {
		for _, t := range a.appendTerms(nil, text) {
			if serverNoise[t] {
				continue
			}
			c := counts[t]
			if c == nil {
				c = new([numFields]float32)
				counts[t] = c
			}
			c[fieldServer] = 1 // a name said twice (key and title) is one mention
			lens[fieldServer]++
		}
	}
	return newDoc(counts, lens)
}

var serverNoise = setOf("mcp", "server", "servers", "model", "context", "protocol")

// splitSummary cuts a description after its first sentence: the summary
// says what the tool does; the rest — examples ("such as ..."), warnings,
// usage notes — mentions many things the tool does not do, and counts
// less. The sentence ends at a period, question or exclamation mark
// followed by a space or a line break, or at a blank line.
func splitSummary(d string) (summary, detail string) {
	d = strings.TrimSpace(d)
	for i := 0; i+1 < len(d); i++ {
		switch {
		case (d[i] == '.' || d[i] == '?' || d[i] == '!') && (d[i+1] == ' ' || d[i+1] == '\n'):
			return d[:i+1], d[i+1:]
		case d[i] == '\n' && d[i+1] == '\n':
			return d[:i], d[i:]
		}
	}
	return d, ""
}
