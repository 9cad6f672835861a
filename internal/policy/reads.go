package policy

import (
	"bytes"
	"slices"

	"github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/x/exp/ast"
)

// argumentReads is what a group of policies reads of context.arguments,
// found in their syntax tree at load. A call's arguments then become a
// record holding only those members: a policy that can only ask for
// `context.arguments.x` or `context.arguments has x` cannot tell that
// record from the full one, and members no policy names are never turned
// into Cedar values (the whole object is still read, so its syntax and
// duplicate keys are checked as before).
type argumentReads struct {
	// any is true when some policy mentions context.arguments.
	any bool
	// whole is true when some policy uses the record itself (compares it,
	// passes it on, reads the context as a value): every member is then
	// converted.
	whole bool
	// names are the members read, sorted, when whole is false.
	names []string
}

// readsOf is what one policy reads of the arguments.
func readsOf(p *cedar.Policy) argumentReads {
	var r argumentReads
	for _, c := range p.AST().Conditions {
		ast.Inspect(ast.NewNode(c.Body), r.visit)
	}
	return r
}

// visit records one node of a condition; it returns false for the nodes
// whose children it has accounted for.
func (r *argumentReads) visit(n ast.IsNode) bool {
	switch n := n.(type) {
	case ast.NodeTypeAccess:
		return r.member(n.Arg, n.Value, true)
	case ast.NodeTypeHas:
		return r.member(n.Arg, n.Value, false)
	case ast.NodeTypeVariable:
		if n.Name == "context" {
			// The context as a value (compared, or reached through an
			// if-then-else) exposes the whole arguments record.
			r.any, r.whole = true, true
		}
	}
	return true
}

// member records `object.name` (access) or `object has name`.
func (r *argumentReads) member(object ast.IsNode, name cedar.String, access bool) bool {
	switch {
	case isArguments(object):
		r.any = true
		r.add(string(name))
		return false
	case isContext(object):
		if access && name == "arguments" {
			// context.arguments not under a named access: the record
			// itself is the value.
			r.any, r.whole = true, true
		}
		return false
	}
	return true
}

func (r *argumentReads) add(name string) {
	if i, found := slices.BinarySearch(r.names, name); !found {
		r.names = slices.Insert(r.names, i, name)
	}
}

// merge adds what o reads.
func (r *argumentReads) merge(o argumentReads) {
	r.any = r.any || o.any
	r.whole = r.whole || o.whole
	for _, n := range o.names {
		r.add(n)
	}
}

// match reports whether a member of the arguments object goes into the
// record (nil r: nothing is kept), and names the member a policy reads that key equals
// but for letter case, if any: a key spelt so is refused, since a tool's
// decoder may take it for that member while the policy sees it absent.
func (r *argumentReads) match(key []byte) (keep bool, misspelt string) {
	if r == nil {
		return false, ""
	}
	for _, n := range r.names {
		if n == string(key) {
			return true, ""
		}
	}
	for _, n := range r.names {
		if bytes.EqualFold([]byte(n), key) {
			return false, n
		}
	}
	return r.whole, ""
}

func isContext(n ast.IsNode) bool {
	v, ok := n.(ast.NodeTypeVariable)
	return ok && v.Name == "context"
}

// isArguments reports whether n is context.arguments (or
// context["arguments"], which parses the same).
func isArguments(n ast.IsNode) bool {
	a, ok := n.(ast.NodeTypeAccess)
	return ok && a.Value == "arguments" && isContext(a.Arg)
}
