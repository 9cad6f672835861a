package policy

import (
	"encoding/json"
	"fmt"

	"github.com/cedar-policy/cedar-go"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// Anonymous is the principal of a call made while auth is off.
const Anonymous = "anonymous"

// Input is one call as a policy sees it.
type Input struct {
	// Principal is the caller's name ("" = auth off, sent as Anonymous).
	Principal string
	// Groups are the caller's groups, the principal's parents.
	Groups []string
	// Tool and Source name the resource and its source attribute.
	Tool, Source string
	// Annotations are the tool's hints, the resource's annotations
	// attribute (absent when nil).
	Annotations *tool.Annotations
	// Arguments is the call's JSON object (already validated).
	Arguments json.RawMessage
	// Session and Protocol go into the context as they are.
	Session, Protocol string
}

// Effect is what a policy decision lets the call do.
type Effect uint8

// The effects of a decision.
const (
	Allow Effect = iota
	Deny
	Approval // permitted, by a policy that wants a human to approve first
)

// Verdict is one decision.
type Verdict struct {
	Effect Effect
	// Policy is the @id of the deciding policy (for a deny, the first
	// forbid; for an approval, the permit asking for it); "" when no
	// policy permits the call.
	Policy string
	// Reason is that policy's @reason.
	Reason string
	// Err is set when the arguments could not be turned into a Cedar
	// record; the call is then denied.
	Err error
}

// Denial is the text a denied caller reads.
func (v Verdict) Denial() string {
	switch {
	case v.Err != nil:
		return fmt.Sprintf("denied by policy: %v", v.Err)
	case v.Policy == "":
		return "denied by policy: no policy permits this call"
	case v.Reason == "":
		return fmt.Sprintf("denied by policy %s", v.Policy)
	}
	return fmt.Sprintf("denied by policy %s: %s", v.Policy, v.Reason)
}

// Decide evaluates every policy against the call. Cedar's rules hold: a
// forbid wins, and without a permit the call is denied.
func (s *Set) Decide(in Input) Verdict {
	ix := s.index(in.Tool, in.Source, in.Annotations)
	args := emptyRecord
	if ix.arguments.any {
		var err error
		if args, err = argumentsRecord(in.Arguments, &ix.arguments); err != nil {
			return Verdict{Effect: Deny, Err: err}
		}
	}
	ents := &entities{principal: s.principal(in.Principal, in.Groups), tool: ix.entity}
	req := cedar.Request{
		Principal: ents.principal.UID,
		Action:    actionExecute,
		Resource:  ents.tool.UID,
		Context:   ix.context(args, in),
	}
	decision, diag := cedar.Authorize(&ix.policies, ents, req) // a pointer: no copy of the slice header to the heap
	if decision == cedar.Deny {
		return s.denied(diag)
	}
	for _, d := range diag.Reasons {
		if r := s.rules[d.PolicyID]; r.approval {
			return Verdict{Effect: Approval, Policy: r.id, Reason: r.reason}
		}
	}
	return Verdict{Effect: Allow}
}

// principal is the caller's entity; one without groups is made once.
func (s *Set) principal(name string, groupNames []string) cedar.Entity {
	if name == "" {
		name = Anonymous
	}
	if len(groupNames) > 0 {
		return cedar.Entity{UID: cedar.NewEntityUID(TypePrincipal, cedar.String(name)), Parents: groups(groupNames)}
	}
	if v, ok := s.principals.Load(name); ok {
		return v.(cedar.Entity)
	}
	e := cedar.Entity{UID: cedar.NewEntityUID(TypePrincipal, cedar.String(name)), Parents: cedar.NewEntityUIDSet()}
	s.principals.Store(name, e)
	return e
}

// context is the request's context record.
func (ix *toolIndex) context(args cedar.Record, in Input) cedar.Record {
	// Without the members its policies read, a call's context is that of
	// a call without arguments.
	cacheable := args.Len() == 0 && in.Session == ""
	if cacheable {
		if v, ok := ix.contexts.Load(in.Protocol); ok {
			return v.(cedar.Record)
		}
	}
	r := cedar.NewRecord(cedar.RecordMap{
		"arguments": args,
		"session":   cedar.String(in.Session),
		"protocol":  cedar.String(in.Protocol),
	})
	if cacheable {
		ix.contexts.Store(in.Protocol, r)
	}
	return r
}

var (
	actionExecute = cedar.NewEntityUID(TypeAction, ActionExecute)
	emptyRecord   = cedar.NewRecord(nil)
)

func groups(names []string) cedar.EntityUIDSet {
	if len(names) == 0 {
		return cedar.EntityUIDSet{}
	}
	uids := make([]cedar.EntityUID, len(names))
	for i, g := range names {
		uids[i] = cedar.NewEntityUID(TypeGroup, cedar.String(g))
	}
	return cedar.NewEntityUIDSet(uids...)
}

// entities is the request's two entities without a map: a policy can only
// reach the principal (and its groups, which carry nothing) and the tool.
type entities struct{ principal, tool cedar.Entity }

func (e *entities) Get(uid cedar.EntityUID) (cedar.Entity, bool) {
	switch uid {
	case e.principal.UID:
		return e.principal, true
	case e.tool.UID:
		return e.tool, true
	}
	return cedar.Entity{}, false
}
