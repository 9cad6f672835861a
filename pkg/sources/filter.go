package sources

import (
	"fmt"
	"sort"
)

// Filter is a tools filter map as written in config ({"name": true|false}),
// the same rule everywhere: empty keeps everything; at least one true makes
// it an allowlist; only false entries make it a drop-list.
type Filter map[string]bool

// Keep reports whether the tool with this (original) name passes.
func (f Filter) Keep(name string) bool {
	if len(f) == 0 {
		return true
	}
	if f.isAllowlist() {
		return f[name]
	}
	v, listed := f[name]
	return !listed || v
}

func (f Filter) isAllowlist() bool {
	for _, v := range f {
		if v {
			return true
		}
	}
	return false
}

// Unknown returns warnings for names in the filter that are not among known,
// sorted, phrased for the log ("tools filter names unknown tool X").
func (f Filter) Unknown(where string, known []string) []string {
	set := make(map[string]struct{}, len(known))
	for _, k := range known {
		set[k] = struct{}{}
	}
	var warns []string
	for name := range f {
		if _, ok := set[name]; !ok {
			warns = append(warns, fmt.Sprintf("%s: tools filter names unknown tool %q", where, name))
		}
	}
	sort.Strings(warns)
	return warns
}
