package policy

import (
	"fmt"
	"path/filepath"

	"github.com/cedar-policy/cedar-go/x/exp/ast"
)

// NamedTool is a tool a policy's resource scope names, and where.
type NamedTool struct {
	Name string
	At   string // file:line of the policy
}

// ToolsNamed lists the tools the policies name in their resource scope
// (resource == Tool::"bash", resource in Tool::"bash"), in load order, for
// `--check` to warn about names no source offers (a policy that never
// applies, or a typo).
func (s *Set) ToolsNamed() []NamedTool {
	var out []NamedTool
	for _, e := range s.ordered {
		var uid *struct{ typ, id string }
		switch sc := e.p.AST().Resource.(type) {
		case ast.ScopeTypeEq:
			uid = &struct{ typ, id string }{string(sc.Entity.Type), string(sc.Entity.ID)}
		case ast.ScopeTypeIn:
			uid = &struct{ typ, id string }{string(sc.Entity.Type), string(sc.Entity.ID)}
		}
		if uid == nil || uid.typ != TypeTool {
			continue
		}
		pos := e.p.Position()
		out = append(out, NamedTool{Name: uid.id, At: fmt.Sprintf("%s:%d", filepath.Base(pos.Filename), pos.Line)})
	}
	return out
}

// HasApprovals reports whether some policy holds calls for an approval
// (@approval("required")).
func (s *Set) HasApprovals() bool {
	for _, r := range s.rules {
		if r.approval {
			return true
		}
	}
	return false
}
