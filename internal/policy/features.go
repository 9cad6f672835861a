package policy

import (
	"github.com/cedar-policy/cedar-go"
)

// An MCP server's resources and prompts, as a policy sees a request for
// one: principal Principal::"<caller>", action Action::"read" on
// Resource::"<URI as served>" (resources/read, resources/subscribe and
// completing a template's argument) or Action::"get" on Prompt::"<name as
// served>" (prompts/get and completing a prompt's argument); the entity's
// attribute server is the MCP server's name; context {session, protocol}.
const (
	TypeResource = "Resource"
	TypePrompt   = "Prompt"
	ActionRead   = "read"
	ActionGet    = "get"
)

// FeatureInput is one request for a resource or a prompt.
type FeatureInput struct {
	Principal string
	Groups    []string
	// Action is ActionRead or ActionGet.
	Action string
	// Target is the resource URI or prompt name as served.
	Target, Server    string
	Session, Protocol string
}

func knownAction(id string) bool {
	switch id {
	case ActionExecute, ActionConnect, ActionRead, ActionGet:
		return true
	}
	return false
}

// DecidesFeature reports whether the policies decide requests with this
// action: only when some policy names it. Policies written for tool calls
// alone (which permit Action::"execute") would otherwise deny every read,
// as Cedar denies what no policy permits.
func (s *Set) DecidesFeature(action string) bool {
	if s == nil {
		return false
	}
	if action == ActionRead {
		return s.reads
	}
	return s.gets
}

// DecideFeature evaluates every policy against the request: a forbid wins,
// and without a permit the request is refused.
func (s *Set) DecideFeature(in FeatureInput) Verdict {
	typ := TypeResource
	if in.Action == ActionGet {
		typ = TypePrompt
	}
	target := cedar.Entity{UID: cedar.NewEntityUID(cedar.EntityType(typ), cedar.String(in.Target)),
		Attributes: cedar.NewRecord(cedar.RecordMap{"server": cedar.String(in.Server)})}
	ents := &entities{principal: s.principal(in.Principal, in.Groups), tool: target}
	req := cedar.Request{
		Principal: ents.principal.UID,
		Action:    cedar.NewEntityUID(TypeAction, cedar.String(in.Action)),
		Resource:  target.UID,
		Context: cedar.NewRecord(cedar.RecordMap{
			"session":  cedar.String(in.Session),
			"protocol": cedar.String(in.Protocol),
		}),
	}
	return s.allowOrDeny(cedar.Authorize(s.ordered, ents, req))
}

// namesAction reports whether p's action scope names Action::"<id>".
func namesAction(p *cedar.Policy, id string) bool {
	for _, uid := range actionUIDs(p.AST().Action) {
		if uid.Type == TypeAction && string(uid.ID) == id {
			return true
		}
	}
	return false
}
