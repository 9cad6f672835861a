// Package policy decides, with Cedar policies, whether one tool call may
// run, is refused, or waits for a human's approval. It knows no protocol and
// no registry: the core builds an Input per call and asks Decide; the files
// are parsed once (at start and on every reload) into an immutable Set.
//
// docs/policy.md describes the request a policy sees and the schema.
package policy

import (
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/cedar-policy/cedar-go"
	cedartypes "github.com/cedar-policy/cedar-go/types"
	"github.com/cedar-policy/cedar-go/x/exp/ast"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// Entity types and the one action a policy can name.
const (
	TypePrincipal = "Principal"
	TypeGroup     = "Group"
	TypeAction    = "Action"
	TypeTool      = "Tool"
	ActionExecute = "execute"
	// TypeHost and ActionConnect are a sandboxed command's connection
	// through the egress proxy (connect.go).
	TypeHost      = "Host"
	ActionConnect = "connect"
)

// FileError is a policy file that does not parse or validate, with the
// position of the fault so an operator can go straight to it.
type FileError struct {
	File         string
	Line, Column int
	Msg          string
}

func (e *FileError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
}

// rule is what the engine needs of one policy besides Cedar's own view.
type rule struct {
	id       string // @id, or file:line when the policy has none
	reason   string // @reason, "" when absent
	approval bool   // @approval("required")
}

// Set is the policies of all files, parsed and validated. Immutable but
// for its per-tool index, which fills as tools are called.
type Set struct {
	cedar *cedar.PolicySet
	rules map[cedar.PolicyID]rule
	files []string
	// forTool holds, per tool name, the policies whose resource scope can
	// match that tool: a policy scoped to resource == Tool::"bash" is not
	// evaluated for any other tool. Tool names are the registry's, so
	// the index is as bounded as the registry is.
	forTool sync.Map // string → *toolIndex
	// principals caches the Principal entity of callers without groups.
	principals sync.Map // string → cedar.Entity
	// ordered is every policy in load order, so the first forbid named in
	// a denial is the first in the files.
	ordered subset
	// connects: some policy names Action::"connect", so the policies
	// decide egress too (connect.go).
	connects bool
	// reads and gets: some policy names Action::"read" or Action::"get",
	// so the policies decide resource reads or prompts too (features.go).
	reads, gets bool
}

// toolIndex is what Decide reuses for every call of one tool.
type toolIndex struct {
	policies subset
	// entity is the Tool entity with its attributes.
	entity cedar.Entity
	// arguments is what the subset reads of context.arguments: a call's
	// JSON is converted only when some policy reads it, and only the
	// members they name.
	arguments   argumentReads
	source      string
	annotations *tool.Annotations // the hints the entity was built from
	// contexts caches the context record of calls without a session
	// whose arguments hold nothing the policies read: it then depends on
	// the protocol alone.
	contexts sync.Map // protocol → cedar.Record
}

// subset is policies in load order.
type subset []idPolicy

type idPolicy struct {
	id    cedar.PolicyID
	p     *cedar.Policy
	reads argumentReads
}

// All lets Authorize walk the subset.
func (s subset) All() iter.Seq2[cedar.PolicyID, *cedar.Policy] {
	return func(yield func(cedar.PolicyID, *cedar.Policy) bool) {
		for _, e := range s {
			if !yield(e.id, e.p) {
				return
			}
		}
	}
}

// index is what applies to a tool: the policies whose resource scope can
// match it and its entity. A tool's source is fixed for its name in a
// snapshot; a reload that moves a name to another source builds a new Set.
func (s *Set) index(name, source string, hints *tool.Annotations) *toolIndex {
	// A tool's hints are set once when its source builds it, so the same
	// pointer means the same hints; a rebuilt tool gets a fresh entity.
	if v, ok := s.forTool.Load(name); ok {
		if ix := v.(*toolIndex); ix.source == source && ix.annotations == hints {
			return ix
		}
	}
	uid := cedar.NewEntityUID(TypeTool, cedar.String(name))
	ix := &toolIndex{entity: cedar.Entity{UID: uid, Attributes: toolAttrs(source, hints)}, source: source, annotations: hints}
	for _, e := range s.ordered {
		if eq, ok := e.p.AST().Resource.(ast.ScopeTypeEq); ok && eq.Entity != uid {
			continue
		}
		ix.policies = append(ix.policies, e)
		ix.arguments.merge(e.reads)
	}
	s.forTool.Store(name, ix)
	return ix
}

// toolAttrs are the Tool entity's attributes: its source, and the hints
// the tool declares as the record annotations, holding only the hints
// that are known (a policy tests one with `has` first).
func toolAttrs(source string, hints *tool.Annotations) cedar.Record {
	attrs := cedar.RecordMap{"source": cedar.String(source)}
	if hints != nil {
		a := cedar.RecordMap{}
		if hints.Title != "" {
			a["title"] = cedar.String(hints.Title)
		}
		for key, v := range map[cedar.String]*bool{
			"readOnlyHint": hints.ReadOnly, "destructiveHint": hints.Destructive,
			"idempotentHint": hints.Idempotent, "openWorldHint": hints.OpenWorld,
		} {
			if v != nil {
				a[key] = cedar.Boolean(*v)
			}
		}
		attrs["annotations"] = cedar.NewRecord(a)
	}
	return cedar.NewRecord(attrs)
}

// Len is the number of policies.
func (s *Set) Len() int { return len(s.rules) }

// Load reads and validates every file. The first fault is returned as a
// *FileError naming the file, line and column.
func Load(files []string) (*Set, error) {
	s := &Set{cedar: cedar.NewPolicySet(), rules: map[cedar.PolicyID]rule{}, files: files}
	ids := map[string]string{}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, &FileError{File: f, Msg: err.Error()}
		}
		if err := s.add(f, src, ids); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Parse is Load for one document already in memory (tests, docs).
func Parse(name string, src []byte) (*Set, error) {
	s := &Set{cedar: cedar.NewPolicySet(), rules: map[cedar.PolicyID]rule{}, files: []string{name}}
	if err := s.add(name, src, map[string]string{}); err != nil {
		return nil, err
	}
	return s, nil
}

// cedarPos finds "<input>:L:C" in cedar-go's parse errors.
var cedarPos = regexp.MustCompile(`<input>:(\d+):(\d+):?\s*`)

func (s *Set) add(file string, src []byte, ids map[string]string) error {
	list, err := cedar.NewPolicyListFromBytes(file, src)
	if err != nil {
		return parseError(file, err)
	}
	for i, p := range list {
		pos := p.Position()
		at := func(msg string, args ...any) error {
			return &FileError{File: file, Line: pos.Line, Column: pos.Column, Msg: fmt.Sprintf(msg, args...)}
		}
		if err := validate(p); err != nil {
			return at("%v", err)
		}
		ann := p.Annotations()
		r := rule{reason: string(ann["reason"]), id: string(ann["id"])}
		if r.id == "" {
			r.id = fmt.Sprintf("%s:%d", filepath.Base(file), pos.Line)
		}
		if prev, dup := ids[r.id]; dup {
			return at("policy id %q is used twice (also at %s); give each policy its own @id", r.id, prev)
		}
		ids[r.id] = fmt.Sprintf("%s:%d:%d", file, pos.Line, pos.Column)
		switch v, ok := ann["approval"]; {
		case !ok:
		case v == "required":
			if p.Effect() != cedar.Permit {
				return at(`@approval("required") only means something on a permit policy`)
			}
			r.approval = true
		default:
			return at(`@approval(%q): the only value is "required"`, string(v))
		}
		key := cedar.PolicyID(fmt.Sprintf("%s#%d", file, i))
		s.cedar.Add(key, p)
		s.ordered = append(s.ordered, idPolicy{key, p, readsOf(p)})
		s.rules[key] = r
		s.connects = s.connects || namesConnect(p)
		s.reads = s.reads || namesAction(p, ActionRead)
		s.gets = s.gets || namesAction(p, ActionGet)
	}
	return nil
}

func parseError(file string, err error) error {
	msg := err.Error()
	m := cedarPos.FindStringSubmatchIndex(msg)
	if m == nil {
		return &FileError{File: file, Msg: strings.TrimPrefix(msg, "parser error: ")}
	}
	line, _ := strconv.Atoi(msg[m[2]:m[3]])
	col, _ := strconv.Atoi(msg[m[4]:m[5]])
	rest := msg[m[1]:]
	return &FileError{File: file, Line: line, Column: col, Msg: inWords(rest)}
}

// The shapes of cedar-go's parse errors: `"TOKEN": exact got X want Y`
// and friends, which read like a debugger's output.
var (
	cedarNear  = regexp.MustCompile(`^"((?:[^"\\]|\\.)*)": (.*)$`)
	cedarExact = regexp.MustCompile(`^exact got (.*) want (.*)$`)
)

// inWords turns a cedar-go parse error into a sentence that says what was
// expected, what was found, and for the common slip (a missing ";") what
// to do.
func inWords(msg string) string {
	m := cedarNear.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	near, what := m[1], m[2]
	if x := cedarExact.FindStringSubmatch(what); x != nil {
		got, want := x[1], x[2]
		found := fmt.Sprintf("found %q", got)
		if got == "" {
			found = "the file ends"
		}
		out := fmt.Sprintf("expected %q here but %s", want, found)
		if want == ";" {
			out += " (every policy ends with a semicolon: add it at the end of the policy before this point)"
		}
		return out
	}
	if effect, ok := strings.CutPrefix(what, "unexpected effect: "); ok {
		return fmt.Sprintf("a policy starts with permit or forbid, not %q", effect)
	}
	if what == "invalid primary" {
		return fmt.Sprintf("expected a value (a literal, principal, resource, context or an entity) but found %q", near)
	}
	if near == "" {
		return what
	}
	return fmt.Sprintf("%s (near %q)", what, near)
}

// validate checks what Cedar's parser accepts but no toolnexus request can
// ever match, so a typo in an entity type or action is an error at load
// instead of a policy that silently never applies.
func validate(p *cedar.Policy) error {
	a := p.AST()
	check := func(role string, want []string, typ cedartypes.EntityType) error {
		if typ == "" {
			return nil
		}
		for _, w := range want {
			if string(typ) == w {
				return nil
			}
		}
		return fmt.Errorf("%s: entity type %q is not one toolnexus sends; use %s", role, string(typ), strings.Join(want, " or "))
	}
	if err := check("principal", []string{TypePrincipal, TypeGroup}, scopeType(a.Principal)); err != nil {
		return err
	}
	if err := check("resource", []string{TypeTool, TypeHost, TypeResource, TypePrompt}, scopeType(a.Resource)); err != nil {
		return err
	}
	for _, uid := range actionUIDs(a.Action) {
		if uid.Type != TypeAction || !knownAction(string(uid.ID)) {
			return fmt.Errorf("action: %s is not one toolnexus sends; the actions are Action::%q, Action::%q, Action::%q and Action::%q",
				uid.String(), ActionExecute, ActionConnect, ActionRead, ActionGet)
		}
	}
	return nil
}

// scopeType is the entity type a principal or resource scope names ("" for
// a scope that names none).
func scopeType(n any) cedartypes.EntityType {
	switch s := n.(type) {
	case ast.ScopeTypeEq:
		return s.Entity.Type
	case ast.ScopeTypeIn:
		return s.Entity.Type
	case ast.ScopeTypeIs:
		return s.Type
	case ast.ScopeTypeIsIn:
		return s.Type
	}
	return ""
}

// actionUIDs are the actions an action scope names.
func actionUIDs(n any) []cedartypes.EntityUID {
	switch s := n.(type) {
	case ast.ScopeTypeEq:
		return []cedartypes.EntityUID{s.Entity}
	case ast.ScopeTypeIn:
		return []cedartypes.EntityUID{s.Entity}
	case ast.ScopeTypeInSet:
		return s.Entities
	}
	return nil
}
