package mcp

//lint:file-ignore SA1019 sampling is deprecated in MCP 2026-07-28 but still an input request an upstream may send; toolnexus passes it to the caller.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"sort"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/internal/plainjson"
	"github.com/toolnexus/toolnexus/internal/suspend/pending"
	"github.com/toolnexus/toolnexus/pkg/feature"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// An upstream on MCP 2026-07-28 asks for input by answering the call with
// input_required (inputRequests and an opaque requestState) and expects the
// call again with inputResponses. The SDK's automatic retry is off
// (connect.go), so such a call suspends as nothing but a pending entry: no
// goroutine, no open request to the upstream. Each input request is shown
// to the caller in turn; when all are answered, the tool is called again
// with the answers and the upstream's requestState.
//
// The upstream keeps no session between rounds, so nothing of the call
// needs this process: the whole round trip (roundTrip) is the entry's
// portable state in the suspended-call store, and whichever replica the
// answer reaches restores it and makes the retry itself.

// modernVersion is the first protocol whose servers ask by input_required.
const modernVersion = "2026-07-28"

// maxRoundTrips bounds how often one call may come back input_required.
const maxRoundTrips = 10

// roundTrip is a call suspended on an upstream's input_required: what the
// retry needs, kept in the pending entry's state (as JSON, so any replica
// reads it).
type roundTrip struct {
	Tool      string               `json:"tool"` // the upstream's name of the tool
	Arguments json.RawMessage      `json:"arguments,omitempty"`
	Meta      sdk.Meta             `json:"meta,omitempty"`  // the first call's _meta (its trace)
	State     string               `json:"state,omitempty"` // the upstream's requestState, echoed as is
	Requests  sdk.InputRequestMap  `json:"requests"`
	Responses sdk.InputResponseMap `json:"responses,omitempty"`
	Asking    string               `json:"asking"` // the input request id the open entry shows
	Rounds    int                  `json:"rounds"`
	Round     string               `json:"round"` // names the current round (tool.Pending.Round)
}

// speaksModern reports whether the session negotiated 2026-07-28 or later.
func (sess *session) speaksModern() bool {
	ir := sess.cs.InitializeResult()
	return ir != nil && ir.ProtocolVersion >= modernVersion
}

// callRoundTrip calls a tool on a modern upstream synchronously; an
// input_required answer suspends the call.
func (s *Source) callRoundTrip(ctx context.Context, sess *session, params *sdk.CallToolParams, call tool.Call, name string) tool.Result {
	res, err := sess.cs.CallTool(ctx, params)
	if err != nil || res == nil || !res.NeedsInput() {
		return s.finish(ctx, sess, name, res, err)
	}
	rt := &roundTrip{Tool: params.Name, Arguments: call.Arguments, Meta: params.Meta, Rounds: 1}
	return s.inputRequired(ctx, call, rt, res, name)
}

// inputRequired turns an input_required result into the next pending
// request (or a failure the caller can act on).
func (s *Source) inputRequired(ctx context.Context, call tool.Call, rt *roundTrip, res *sdk.CallToolResult, name string) tool.Result {
	if !s.suspends() {
		return tool.Failure(name+": the MCP server asked for input, but its config turns elicitation and sampling off (set elicitation or sampling to true to pass its requests on)", s.meta)
	}
	if len(res.InputRequests) == 0 {
		return tool.Failure(name+": the MCP server is busy (input_required with no input requests); retry the call later", s.meta)
	}
	if rt.Rounds > maxRoundTrips {
		return tool.Failure(name+": the MCP server asked for input more than 10 times in one call; the call was stopped", s.meta)
	}
	rt.State, rt.Requests, rt.Responses, rt.Round = res.RequestState, res.InputRequests, sdk.InputResponseMap{}, roundName()
	return s.askNext(ctx, call, rt, name)
}

// roundName is a new round's name: 96 random bits.
func roundName() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// askNext opens a pending entry for the first input request not answered
// yet (in key order, so the caller sees a stable sequence), with the round
// trip as its portable state. The request carries the upstream's key and
// the round's other open requests, so a door whose client answers a round
// whole (/mcp at 2026-07-28) shows them all at once; each answer still
// resumes its own entry, bound to the call.
func (s *Source) askNext(ctx context.Context, call tool.Call, rt *roundTrip, name string) tool.Result {
	ids := make([]string, 0, len(rt.Requests))
	for id := range rt.Requests {
		if _, done := rt.Responses[id]; !done {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	round := make([]tool.Pending, len(ids))
	for i, id := range ids {
		p, _, ok := pendingOf(rt.Requests[id])
		if !ok {
			return tool.Failure(name+": the MCP server asked for input of a kind toolnexus does not pass on (only elicitation, sampling and roots)", s.meta)
		}
		p.Key, p.Round = id, rt.Round
		round[i] = p
	}
	rt.Asking = ids[0]
	state, err := json.Marshal(rt)
	if err != nil {
		return tool.Failure(name+": the MCP server's input requests cannot be kept for the answer: "+err.Error(), s.meta)
	}
	p := round[0]
	e, err := s.pending.OpenPortable(ctx, call, p.Kind, state, false)
	if err != nil {
		return tool.Failure(name+": "+err.Error(), s.meta)
	}
	p.ID, p.ExpiresAt, p.Also = e.ID, e.ExpiresAt, round[1:]
	r := tool.Suspend(p)
	r.Metadata = s.meta
	return r
}

// restoreRoundTrip is the source's pending.Answering.Restore: the round
// trip an answer resumes, read back from its entry, on whichever replica
// the answer reached.
func (s *Source) restoreRoundTrip(name string) func(*pending.Entry) (pending.Resumer, error) {
	return func(e *pending.Entry) (pending.Resumer, error) {
		var rt roundTrip
		if err := json.Unmarshal(e.State, &rt); err != nil {
			return nil, err
		}
		ir, ok := rt.Requests[rt.Asking]
		if !ok {
			return nil, errors.New("it names no open input request")
		}
		if rt.Responses == nil { // none yet: omitted from the JSON
			rt.Responses = sdk.InputResponseMap{}
		}
		_, e.Check, _ = pendingOf(ir)
		return roundTripResume{src: s, name: name, rt: &rt}, nil
	}
}

// roundTripResume resumes a restored round trip (pending.Resumer).
type roundTripResume struct {
	src  *Source
	name string
	rt   *roundTrip
}

// Resume checks the answer against the input request it answers (refused
// with the request left open), closes the entry and goes on: the next
// input request, or the retry.
func (r roundTripResume) Resume(ctx context.Context, e *pending.Entry, call tool.Call) tool.Result {
	s := r.src
	if msg := checkAnswer(e, *call.Answer); msg != "" {
		return tool.Failure(r.name+": "+msg, s.meta)
	}
	if err := e.Deliver(ctx, *call.Answer); err != nil {
		return tool.Failure(r.name+": "+err.Error(), s.meta)
	}
	return s.resumeRoundTrip(ctx, call, r.rt, *call.Answer, r.name)
}

// pendingOf is how an input request is shown to the caller: the same
// Pending as the server-to-client request of the older protocols.
func pendingOf(ir sdk.InputRequest) (p tool.Pending, check any, ok bool) {
	switch q := ir.(type) {
	case *sdk.ElicitParams:
		mode := q.Mode
		if mode == "" {
			mode = "form"
		}
		data := map[string]any{"mode": mode}
		if q.RequestedSchema != nil {
			data["requestedSchema"] = plainjson.Of(q.RequestedSchema)
		}
		return tool.Pending{Kind: KindElicitation, Prompt: q.Message, URL: q.URL, Data: data}, data["requestedSchema"], true
	case *sdk.CreateMessageParams:
		data, _ := plainjson.Of(q).(map[string]any)
		delete(data, "_meta")
		return tool.Pending{Kind: KindSampling, Prompt: lastUserText(q), Data: data}, nil, true
	case *sdk.CreateMessageWithToolsParams:
		// How the SDK decodes every sampling input request.
		data, _ := plainjson.Of(q).(map[string]any)
		delete(data, "_meta")
		return tool.Pending{Kind: KindSampling, Prompt: lastUserTextV2(q), Data: data}, nil, true
	case *sdk.ListRootsParams:
		return tool.Pending{Kind: KindRoots, Prompt: "The MCP server asks for the client's roots (the directories it may work in)", Data: map[string]any{}}, nil, true
	}
	return tool.Pending{}, nil, false
}

// resumeRoundTrip takes the caller's answer (already checked and the entry
// closed) and either asks the next input request or retries the call, on
// the session a new call would take (the caller's own with tokenExchange).
func (s *Source) resumeRoundTrip(ctx context.Context, call tool.Call, rt *roundTrip, a tool.Answer, name string) tool.Result {
	resp, msg := inputResponse(rt.Requests[rt.Asking], a)
	if msg != "" {
		return tool.Failure(name+": "+msg, s.meta)
	}
	rt.Responses[rt.Asking] = resp
	if len(rt.Responses) < len(rt.Requests) {
		return s.askNext(ctx, call, rt, name)
	}
	sess, release, instead := s.callSession(ctx, call)
	if sess == nil {
		return *instead
	}
	defer release()
	params := &sdk.CallToolParams{Meta: rt.Meta, Name: rt.Tool, Arguments: rt.Arguments, InputResponses: rt.Responses, RequestState: rt.State}
	res, err := sess.cs.CallTool(ctx, params)
	if err != nil || res == nil || !res.NeedsInput() {
		return s.finish(ctx, sess, name, res, err)
	}
	rt.Rounds++
	return s.inputRequired(ctx, call, rt, res, name)
}

// inputResponse is the caller's answer as the upstream expects it.
func inputResponse(ir sdk.InputRequest, a tool.Answer) (sdk.InputResponse, string) {
	switch ir.(type) {
	case *sdk.CreateMessageParams, *sdk.CreateMessageWithToolsParams:
		return undeclinable(a, "sampling", samplingResult)
	case *sdk.ListRootsParams:
		return undeclinable(a, "roots", rootsResult)
	}
	if !a.OK {
		return &sdk.ElicitResult{Action: actionDecline}, ""
	}
	content, _ := plainjson.Of(a.Data).(map[string]any)
	return &sdk.ElicitResult{Action: actionAccept, Content: content}, ""
}

// undeclinable is the answer to a request whose response has no
// "declined" form (sampling, roots), read by read; declined, the call ends.
func undeclinable[R sdk.InputResponse](a tool.Answer, kind string, read func(any) (R, error)) (sdk.InputResponse, string) {
	if !a.OK {
		return nil, "the caller declined the " + kind + " request; the call to the MCP server ends here"
	}
	res, err := read(a.Data)
	if err != nil {
		return nil, err.Error()
	}
	return res, ""
}

// rootsResult reads a roots answer: {"roots": [{"uri": "file:///...",
// "name": "..."}]}, each URI a file:// URI as the protocol requires.
func rootsResult(v any) (*sdk.ListRootsResult, error) {
	bad := errors.New(`the roots answer's data must be {"roots": [{"uri": "file:///path", "name": "..."}]}, every uri a file:// URI`)
	b, err := json.Marshal(v)
	if err != nil {
		return nil, bad
	}
	var res sdk.ListRootsResult
	if json.Unmarshal(b, &res) != nil || res.Roots == nil {
		return nil, bad
	}
	for _, r := range res.Roots {
		if r == nil || !strings.HasPrefix(r.URI, "file://") {
			return nil, bad
		}
	}
	return &res, nil
}

// lastUserTextV2 is lastUserText for a sampling request with array content.
func lastUserTextV2(p *sdk.CreateMessageWithToolsParams) string {
	for i := len(p.Messages) - 1; i >= 0; i-- {
		m := p.Messages[i]
		if m == nil || m.Role != "user" {
			continue
		}
		for _, c := range m.Content {
			if t, ok := c.(*sdk.TextContent); ok {
				return t.Text
			}
		}
	}
	return p.SystemPrompt
}

// answerRound puts a client's answers to a prompt's round of input
// requests (in, as a door that showed the round whole carries them) on
// params, each checked against the request it answers as a tool call's
// answer is: an elicitation against its requestedSchema, sampling and
// roots by their form. Answers to keys the round did not ask are dropped;
// a request left unanswered goes unanswered (the server asks again).
func answerRound(params *sdk.GetPromptParams, in *feature.PromptInput) error {
	var reqs sdk.InputRequestMap
	var resps sdk.InputResponseMap
	if json.Unmarshal(in.Requests, &reqs) != nil || json.Unmarshal(in.Responses, &resps) != nil {
		return feature.Errorf(feature.InvalidArgument, "inputResponses are not answers to the prompt's input requests")
	}
	params.RequestState, params.InputResponses = in.State, sdk.InputResponseMap{}
	for key, ir := range reqs {
		resp, ok := resps[key]
		if !ok {
			continue
		}
		p, check, _ := pendingOf(ir)
		a, kind := answerOf(resp)
		if kind != p.Kind {
			return feature.Errorf(feature.InvalidArgument, "inputResponses[%q] is not an answer to a %s request", key, p.Kind)
		}
		if msg := checkAnswer(&pending.Entry{Kind: p.Kind, Check: check}, a); msg != "" {
			return feature.Errorf(feature.InvalidArgument, "inputResponses[%q]: %s", key, msg)
		}
		v, msg := inputResponse(ir, a)
		if msg != "" {
			return feature.Errorf(feature.InvalidArgument, "inputResponses[%q]: %s", key, msg)
		}
		params.InputResponses[key] = v
	}
	return nil
}

// answerOf is a client's input response as the answer a caller gives,
// and the kind of request it answers ("" for none).
func answerOf(resp sdk.InputResponse) (tool.Answer, string) {
	switch r := resp.(type) {
	case *sdk.ElicitResult:
		return tool.Answer{OK: r.Action == actionAccept, Data: plainjson.Of(r.Content)}, KindElicitation
	case *sdk.CreateMessageResult, *sdk.CreateMessageWithToolsResult:
		return tool.Answer{OK: true, Data: plainjson.Of(r)}, KindSampling
	case *sdk.ListRootsResult:
		return tool.Answer{OK: true, Data: plainjson.Of(r)}, KindRoots
	}
	return tool.Answer{}, ""
}
