// Package search ranks a registry snapshot's tools against a free-text
// query, so an agent facing thousands of tools can ask for the few it needs
// instead of reading the whole list.
//
// The ranking is BM25F: each tool is split into fields (its name cut into
// words at snake_case, kebab-case and camelCase boundaries, its description,
// its parameters' names and its parameters' descriptions), each field has a
// weight and its own length normalisation, and the weighted term
// frequencies are saturated once per tool. Every term's contribution to
// every tool is computed when the index is built, so a query is a sum over
// the posting lists of its terms plus a top-k selection.
//
// An index belongs to exactly one immutable registry snapshot and one View
// (what a caller may see: a visibility predicate and a key naming it), so a
// search never sees a half-applied reload, and neither its scores nor its
// work depend on tools outside its view: the index holds only the visible
// tools, and its corpus statistics are theirs. Cache builds one lazily per
// view and revision. The package knows nothing about gRPC or callers.
package search
