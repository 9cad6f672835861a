package policy

import (
	"github.com/cedar-policy/cedar-go"
)

// ConnectInput is one connection a sandboxed command asks the egress
// proxy for, as a policy sees it: principal Principal::"<caller>",
// action Action::"connect", resource Host::"<name asked>", context
// {port, tool, session}.
type ConnectInput struct {
	Principal     string
	Groups        []string
	Host          string
	Port          int
	Tool, Session string
}

// DecidesConnect reports whether the policies decide egress: only when
// some policy names Action::"connect". Policies written for tool calls
// alone (which permit Action::"execute") would otherwise deny every
// connection, as Cedar denies what no policy permits.
func (s *Set) DecidesConnect() bool { return s != nil && s.connects }

var actionConnect = cedar.NewEntityUID(TypeAction, ActionConnect)

// DecideConnect evaluates every policy against the connection: a forbid
// wins, and without a permit the connection is refused.
func (s *Set) DecideConnect(in ConnectInput) Verdict {
	host := cedar.Entity{UID: cedar.NewEntityUID(TypeHost, cedar.String(in.Host)), Attributes: cedar.NewRecord(nil)}
	ents := &entities{principal: s.principal(in.Principal, in.Groups), tool: host}
	req := cedar.Request{
		Principal: ents.principal.UID,
		Action:    actionConnect,
		Resource:  host.UID,
		Context: cedar.NewRecord(cedar.RecordMap{
			"port":    cedar.Long(in.Port),
			"tool":    cedar.String(in.Tool),
			"session": cedar.String(in.Session),
		}),
	}
	return s.allowOrDeny(cedar.Authorize(s.ordered, ents, req))
}

// denied is the verdict of a Deny decision: it names the first forbid
// that matched, or no policy when nothing permitted. Every decision
// (connections and calls) names its deny the same way.
func (s *Set) denied(diag cedar.Diagnostic) Verdict {
	v := Verdict{Effect: Deny}
	if len(diag.Reasons) > 0 {
		r := s.rules[diag.Reasons[0].PolicyID]
		v.Policy, v.Reason = r.id, r.reason
	}
	return v
}

// allowOrDeny is the verdict of a decision without approvals: a deny names
// the first forbid (or no policy, when nothing permits).
func (s *Set) allowOrDeny(decision cedar.Decision, diag cedar.Diagnostic) Verdict {
	if decision == cedar.Deny {
		return s.denied(diag)
	}
	return Verdict{Effect: Allow}
}

// namesConnect reports whether p's action scope names Action::"connect".
func namesConnect(p *cedar.Policy) bool { return namesAction(p, ActionConnect) }
