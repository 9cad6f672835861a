package search

import "github.com/toolnexus/toolnexus/pkg/registry"

// View is the part of a registry one caller may see: a token's allowlist,
// intersected with what a door serves (/mcp's server.mcp.tools). A search
// ranks within its view alone: the index of a view holds only the tools the
// view shows, so the corpus statistics a score is made of (how many tools
// carry a word, how long a description is on average) and the postings a
// query walks are those of visible tools. Neither a score nor the work of a
// search — hence its time — changes when tools the caller cannot see are
// added or removed.
type View struct {
	// Key names the predicate, for caching: two views with the same key
	// must show the same tools of any snapshot. Build it from what decides
	// visibility (allowlist patterns, served globs), never from who asks,
	// so callers with the same allowlist share one index.
	Key string
	// Visible reports whether the view shows a tool; nil shows all.
	Visible func(*registry.Entry) bool
}

// All is the view of everything: an unrestricted caller's.
var All = View{Key: "*"}

// shows reports whether v shows e.
func (v View) shows(e *registry.Entry) bool { return v.Visible == nil || v.Visible(e) }

// Allowlist decides by a tool's name and source what a caller may see:
// *auth.Principal (a token's tools), a door's served list (/mcp's
// server.mcp.tools). ViewKey names the decision, the same for every list
// that allows the same tools, and "*" for a list that allows everything.
type Allowlist interface {
	Allows(name, source string) bool
	ViewKey() string
}

// Intersect is the view of what every list allows. Lists that allow
// everything add nothing to the key, so an unrestricted caller's view is All
// whatever its door.
func Intersect(lists ...Allowlist) View {
	var keep []Allowlist
	key := ""
	for _, l := range lists {
		if k := l.ViewKey(); k != All.Key {
			keep = append(keep, l)
			key += k + "\x01"
		}
	}
	if len(keep) == 0 {
		return All
	}
	return View{Key: key, Visible: func(e *registry.Entry) bool {
		for _, l := range keep {
			if !l.Allows(e.Tool.Name, e.Tool.Source) {
				return false
			}
		}
		return true
	}}
}
