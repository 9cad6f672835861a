package mcpgateway

//lint:file-ignore SA1019 sampling is deprecated in the 2026-07-28 protocol but still what MCP servers ask for; it is relayed as itself.

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/internal/plainjson"
	"github.com/toolnexus/toolnexus/internal/suspend"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// This file is the one adapter between the core's PENDING contract and the
// 2026-07-28 protocol's multi round-trip requests. A call that suspends
// answers a client on that protocol with resultType "input_required": one
// input request, keyed by the pending id, and a signed requestState
// (requeststate.go). The client retries the same tools/call with
// inputResponses and the requestState, and the retry resumes the call with
// the answer, on any replica that can resume it.
//
// Each pending kind is put as the request an MCP client knows:
//
//   - elicitation and sampling (an upstream MCP server's requests) as
//     themselves;
//   - question (the question tool) as a form elicitation, one property per
//     question (its options an enum, a multiple-choice question an array
//     of them); the answer reaches the tool keyed by question text;
//   - input (an A2A agent's input-required) as a form elicitation of one
//     "text" property, which becomes the message sent to the agent;
//   - authorization (a caller's login at an OAuth upstream) as a URL-mode
//     elicitation of the login page, for a client that declared
//     elicitation.url; accepting it resumes the call once the login ends.
//
// Approval is not among them: a caller cannot answer its own approval,
// only wait for someone else's decision. The protocol's only way to say
// "retry later" is an input_required result with no input requests, which
// clients treat as load shedding and give up on after a few tries (the
// go-sdk after three), so it cannot carry a wait of minutes. The gateway
// instead holds the tools/call open until the decision, with progress
// notifications meanwhile, exactly as for older clients (core/policy.go).
//
// Any other kind, or a client that did not declare elicitation (sampling)
// support, keeps the toolnexus/pending _meta contract.

// Pending kinds besides elicitation and sampling (relay.go).
const (
	kindQuestion = "question" // pkg/sources/builtin's question tool
	kindInput    = "input"    // pkg/sources/a2a's input-required
)

// inputRequired is the input_required result for a call that suspended, or
// nil when the client is not on the 2026-07-28 protocol or cannot be asked
// for this kind. An upstream's round of requests is shown whole, keyed by
// the upstream's own keys (those of a kind the client declared; the rest
// come back as -32021 when their turn comes); the requestState, signed by
// toolnexus, names the request whose answer resumes the call and binds it
// to this caller and call. The upstream's own requestState never leaves
// toolnexus: it stays in the suspended call's entry.
func (g *Gateway) inputRequired(req *mcp.CallToolRequest, call core.Call, r tool.Result) *mcp.CallToolResult {
	p := r.Pending
	if r.Outcome != tool.OutcomePending || p == nil || !multiRoundTrip(req.Session) {
		return nil
	}
	ir := modernInputRequest(p)
	if ir == nil || !clientCan(req.Session, askedAs(p.Kind)) {
		return nil
	}
	claims := bindings(call)
	claims.Pending, claims.Kind, claims.Key, claims.Round = p.ID, p.Kind, p.Key, p.Round
	if !p.ExpiresAt.IsZero() {
		claims.Expires = p.ExpiresAt.Unix()
	}
	if p.Key == "" {
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{p.ID: ir}, RequestState: g.states.sign(claims)}
	}
	reqs := mcp.InputRequestMap{p.Key: ir}
	for i := range p.Also {
		q := &p.Also[i]
		if qr := modernInputRequest(q); qr != nil && clientCan(req.Session, askedAs(q.Kind)) {
			reqs[q.Key] = qr
		}
	}
	return &mcp.CallToolResult{InputRequests: reqs, RequestState: g.states.sign(claims)}
}

// askedAs is the client capability a pending kind needs (clientCan's kind).
func askedAs(kind string) string {
	if kind == kindSampling || kind == kindAuthorization || kind == kindRoots {
		return kind
	}
	return kindElicitation
}

// bindings are the claims a requestState is bound to for this request:
// the call's suspend.Bind. Arguments that do not bind (not one JSON value)
// bind to nothing an issued state holds.
func bindings(call core.Call) stateClaims {
	who := ""
	if call.Caller != nil {
		who = call.Caller.Name
	}
	b, _ := suspend.Bind(who, call.Session, call.Name, call.Arguments)
	return stateClaims{Tool: b.Tool, Args: b.Digest, Principal: b.Principal, Session: b.Session}
}

// modernInputRequest is the MCP input request for a pending request; nil
// for a kind the client cannot answer.
func modernInputRequest(p *tool.Pending) mcp.InputRequest {
	switch p.Kind {
	case kindElicitation, kindSampling, kindAuthorization, kindRoots:
		return inputRequest(p)
	case kindQuestion:
		return &mcp.ElicitParams{Message: p.Prompt, RequestedSchema: questionSchema(p.Data)}
	case kindInput:
		return &mcp.ElicitParams{Message: p.Prompt, RequestedSchema: map[string]any{
			"type":       "object",
			"properties": map[string]any{"text": map[string]any{"type": "string", "title": "Reply", "description": "The reply sent to the agent"}},
			"required":   []any{"text"},
		}}
	}
	return nil
}

// questionKey is the schema property of the i-th question.
func questionKey(i int) string { return fmt.Sprintf("q%d", i+1) }

// questionSchema is the question tool's questions as an elicitation form.
func questionSchema(data map[string]any) map[string]any {
	qs, _ := data["questions"].([]any)
	props := make(map[string]any, len(qs))
	required := make([]any, 0, len(qs))
	for i, q := range qs {
		m, _ := q.(map[string]any)
		text, _ := m["question"].(string)
		prop := map[string]any{"type": "string", "description": text}
		if h, _ := m["header"].(string); h != "" {
			prop["title"] = h
		}
		if opts, _ := m["options"].([]any); len(opts) > 0 {
			if multi, _ := m["multiple"].(bool); multi {
				prop = map[string]any{"type": "array", "description": text, "items": map[string]any{"type": "string", "enum": opts}}
			} else {
				prop["enum"] = opts
			}
		}
		props[questionKey(i)] = prop
		required = append(required, questionKey(i))
	}
	return map[string]any{"type": "object", "properties": props, "required": required}
}

// resumeInput reads a retry's requestState and inputResponses into the
// answer that resumes the call, and the relay that answers the rest of the
// same round from the same inputResponses (an upstream's round is answered
// whole); a refusal is the JSON-RPC error to return instead (-32602: the
// protocol's answer to a requestState that fails its checks), and the call
// stays suspended. inputResponses without a requestState resume nothing:
// the call runs afresh, and they answer only the first round it asks
// (keyed by the upstream's keys; others are ignored, and what they leave
// unanswered is asked again).
func (g *Gateway) resumeInput(req *mcp.CallToolRequest, call core.Call) (*tool.Answer, func(context.Context, tool.Result) *tool.Answer, error) {
	responses := req.Params.InputResponses
	if req.Params.RequestState == "" {
		return nil, roundRelay(responses, ""), nil
	}
	refuse := func(msg string) (*tool.Answer, func(context.Context, tool.Result) *tool.Answer, error) {
		return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg}
	}
	c, err := g.states.open(req.Params.RequestState, bindings(call), time.Now())
	if err != nil {
		return refuse(err.Error())
	}
	key := c.Key
	if key == "" {
		key = c.Pending
	}
	resp, ok := responses[key]
	if !ok {
		return refuse(fmt.Sprintf("inputResponses has no answer to %q, an input request of this requestState: retry with an answer to each input request", key))
	}
	a := answerFor(c, resp, call.Arguments)
	if a == nil {
		return refuse(fmt.Sprintf("inputResponses[%q] is not an answer to a %s request", key, c.Kind))
	}
	if c.Key == "" {
		return a, nil, nil
	}
	return a, roundRelay(responses, c.Round), nil
}

// roundRelay answers, within the call (core.Call.Relay), the requests of
// the upstream's round named round ("": the first round the call asks)
// from the client's inputResponses, by the upstream's keys. It answers
// nothing else: not another round (an answer given for one round is
// never taken for another, of this upstream call or of another inner call
// of a run_code script), not toolnexus's own kinds, and nothing the client
// left out (that request comes back in a fresh input_required). Every
// answer resumes an entry the same call opened, so it is bound to the
// caller as any answer is. The core calls it in turn, never at once.
func roundRelay(responses mcp.InputResponseMap, round string) func(context.Context, tool.Result) *tool.Answer {
	return func(_ context.Context, r tool.Result) *tool.Answer {
		p := r.Pending
		if p == nil || p.Key == "" || !relayed(p.Kind) {
			return nil
		}
		if round == "" {
			round = p.Round
		}
		if p.Round != round {
			return nil
		}
		resp, ok := responses[p.Key]
		if !ok {
			return nil
		}
		return answerOf(p.ID, resp)
	}
}

// answerFor is the answer the client's response carries for the pending
// request the claims name; nil for a response of the wrong type. args are
// the call's arguments (the same as when it suspended: the state is bound
// to them), for the question texts.
func answerFor(c stateClaims, resp mcp.InputResponse, args json.RawMessage) *tool.Answer {
	if c.Kind == kindElicitation || c.Kind == kindSampling || c.Kind == kindRoots {
		return answerOf(c.Pending, resp)
	}
	er, ok := resp.(*mcp.ElicitResult)
	if !ok {
		return nil
	}
	if er.Action != "accept" {
		return &tool.Answer{ID: c.Pending, Reason: "the MCP client answered " + er.Action}
	}
	if c.Kind == kindAuthorization {
		return &tool.Answer{ID: c.Pending, OK: true} // the login itself completes at the web listener
	}
	if c.Kind == kindInput {
		text, _ := er.Content["text"].(string)
		return &tool.Answer{ID: c.Pending, OK: true, Data: text}
	}
	return &tool.Answer{ID: c.Pending, OK: true, Data: byQuestion(er.Content, args)}
}

// byQuestion keys a question form's answers (q1, q2, ...) by the text of
// the question each answers, which the model that asked can read.
func byQuestion(content map[string]any, args json.RawMessage) any {
	var a struct {
		Questions []struct {
			Question string `json:"question"`
		} `json:"questions"`
	}
	if json.Unmarshal(args, &a) != nil {
		return plainjson.Of(content)
	}
	out := make(map[string]any, len(content))
	for i, q := range a.Questions {
		if v, ok := content[questionKey(i)]; ok {
			out[q.Question] = plainjson.Of(v)
		}
	}
	return out
}
