// Package searchtest builds the tool catalog the search tests and
// benchmarks run against: about a thousand tools written for this project
// across many domains (domains.go), served as an OpenAPI document so a
// server imports them like any spec, or as tools for an in-process
// registry. The queries that measure recall are in queries.json.
package searchtest

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"regexp"
	"strings"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// Def is one catalog tool.
type Def struct {
	Name        string
	Description string
	Schema      json.RawMessage
}

// Defs returns the written catalog, in a fixed order.
func Defs() []Def {
	var out []Def
	for _, d := range domains {
		for _, r := range d.resources {
			out = append(out, standardVerbs(d, r)...)
			for _, x := range r.extras {
				name := d.prefix + "_" + x.verb + "_" + r.singular
				if rest, ok := strings.CutPrefix(x.verb, "="); ok {
					name = d.prefix + "_" + rest
				}
				out = append(out, Def{Name: name, Description: x.desc + " (" + d.product + ")", Schema: schema(x.fields)})
			}
		}
	}
	return out
}

// article turns "a issue" into "an issue".
var article = regexp.MustCompile(`\b([Aa]) ([aeiou])`)

func words(s string) string { return strings.ReplaceAll(s, "_", " ") }

// pick chooses one phrasing by the tool's name, so descriptions vary the
// way a real catalog's do, and the same name always reads the same.
func pick(name string, options ...string) string {
	h := fnv.New32a()
	h.Write([]byte(name))
	return options[int(h.Sum32())%len(options)]
}

func standardVerbs(d domain, r resource) []Def {
	one, many := words(r.singular), words(r.plural)
	scope := ""
	var parent []string
	if r.parent != "" {
		parent = []string{r.parent}
		scope = " of one " + words(strings.SplitN(r.parent, ":", 2)[0])
	}
	id := r.singular + "_id:string:the " + one + "'s id"
	mk := func(verb, desc string, fields ...[]string) Def {
		name := d.prefix + "_" + verb
		var all []string
		for _, f := range fields {
			all = append(all, f...)
		}
		return Def{Name: name, Description: article.ReplaceAllString(desc, "${1}n ${2}"), Schema: schema(all)}
	}
	list := d.prefix + "_list_" + r.plural
	return []Def{
		mk("list_"+r.plural, pick(list,
			fmt.Sprintf("List the %s%s in %s, newest first. A %s is %s.", many, scope, d.product, one, r.about),
			fmt.Sprintf("Returns a page of %s%s from %s (%s).", many, scope, d.product, r.about),
			fmt.Sprintf("Enumerate %s%s. In %s a %s is %s.", many, scope, d.product, one, r.about)),
			parent, []string{"limit:integer:page size", "page_token:string:from the previous page"}),
		mk("get_"+r.singular, pick(list,
			fmt.Sprintf("Get one %s from %s by its id, with every field.", one, d.product),
			fmt.Sprintf("Fetch a single %s (%s) in %s.", one, r.about, d.product),
			fmt.Sprintf("Read the details of a %s in %s.", one, d.product)),
			[]string{id}),
		mk("create_"+r.singular, pick(list,
			fmt.Sprintf("Create a new %s in %s: %s.", one, d.product, r.about),
			fmt.Sprintf("Add a %s to %s.", one, d.product),
			fmt.Sprintf("Make a %s%s in %s.", one, scope, d.product)),
			parent, r.fields),
		mk("update_"+r.singular, pick(list,
			fmt.Sprintf("Update the fields of an existing %s in %s; fields left out keep their value.", one, d.product),
			fmt.Sprintf("Edit a %s in %s.", one, d.product),
			fmt.Sprintf("Change a %s of %s.", one, d.product)),
			[]string{id}, r.fields),
		mk("delete_"+r.singular, pick(list,
			fmt.Sprintf("Delete a %s from %s. This cannot be undone.", one, d.product),
			fmt.Sprintf("Remove a %s from %s permanently.", one, d.product),
			fmt.Sprintf("Delete one %s in %s by id.", one, d.product)),
			[]string{id}),
		mk("search_"+r.plural, pick(list,
			fmt.Sprintf("Search %s in %s by keywords and filters.", many, d.product),
			fmt.Sprintf("Find %s%s in %s matching a text query.", many, scope, d.product),
			fmt.Sprintf("Full-text search over %s of %s.", many, d.product)),
			[]string{"query:string:search words"}, parent, []string{"limit:integer:max results"}),
	}
}

// schema renders "name:type:description" fields as a JSON Schema object.
func schema(fields []string) json.RawMessage {
	props := map[string]any{}
	var required []string
	for i, f := range fields {
		parts := strings.SplitN(f, ":", 3)
		if len(parts) != 3 {
			panic("searchtest: field " + f + " is not name:type:description")
		}
		p := map[string]any{"type": parts[1], "description": parts[2]}
		if parts[1] == "array" {
			p["items"] = map[string]any{"type": "string"}
		}
		props[parts[0]] = p
		if i == 0 {
			required = append(required, parts[0])
		}
	}
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	b, _ := json.Marshal(s)
	return b
}

// OpenAPI renders defs as an OpenAPI 3.0 document: one POST operation per
// tool, operationId its name, summary its description, the arguments its
// JSON request body. baseURL is where the operations would be called.
func OpenAPI(defs []Def, baseURL string) []byte {
	paths := map[string]any{}
	for _, d := range defs {
		var s map[string]any
		_ = json.Unmarshal(d.Schema, &s)
		paths["/ops/"+d.Name] = map[string]any{"post": map[string]any{
			"operationId": d.Name,
			"summary":     d.Description,
			"requestBody": map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{"schema": s}}},
			"responses":   map[string]any{"200": map[string]any{"description": "the result"}},
		}}
	}
	doc := map[string]any{
		"openapi": "3.0.3",
		"info":    map[string]any{"title": "toolnexus search catalog", "version": "1"},
		"servers": []any{map[string]any{"url": baseURL}},
		"paths":   paths,
	}
	b, _ := json.MarshalIndent(doc, "", " ")
	return b
}

// Tools returns n tools for an in-process registry: the written catalog,
// repeated under numbered prefixes ("r2_", "r3_"...) past its own size, so
// a 10,000-tool benchmark keeps the catalog's vocabulary and overlap.
func Tools(n int) []tool.Tool {
	defs := Defs()
	out := make([]tool.Tool, 0, n)
	for i := 0; len(out) < n; i++ {
		d := defs[i%len(defs)]
		name := d.Name
		if round := i / len(defs); round > 0 {
			name = fmt.Sprintf("r%d_%s", round+1, d.Name)
		}
		out = append(out, tool.Must(tool.New(name, noop, tool.WithDescription(d.Description), tool.WithInputSchema(d.Schema), tool.WithSource("catalog"))))
	}
	return out
}

func noop(context.Context, tool.Call) tool.Result { return tool.Result{} }
