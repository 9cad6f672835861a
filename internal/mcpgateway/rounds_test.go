package mcpgateway_test

//lint:file-ignore SA1019 sampling and roots are deprecated in 2026-07-28 but still input requests upstreams make; the tests answer them.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/metadata"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/inproc"
	"github.com/toolnexus/toolnexus/internal/testutil/mcpclient"
)

// roundsRig is a gateway with the go-sdk server of the conformance
// suite's input_required fixtures behind it, code mode on, and two callers, alice and
// bob; it returns the gateway and the two tokens.
func roundsRig(t *testing.T) (g *inproc.Rig, alice, bob string) {
	alice, bob = "mcp-alice-secret-0001", "mcp-bob-secret-000002"
	t.Setenv("TN_MCP_ALICE", alice)
	t.Setenv("TN_MCP_BOB", bob)
	cfg, _ := json.Marshal(map[string]any{"builtins": false, "skills": []any{}, "codeMode": map[string]any{"enabled": true},
		"mcpServers": map[string]any{"mrtr": map[string]any{"url": testutil.StartMRTRUpstream(t), "prefix": ""}},
		"auth":       map[string]any{"tokens": []any{map[string]any{"name": "alice", "token": "${TN_MCP_ALICE}"}, map[string]any{"name": "bob", "token": "${TN_MCP_BOB}"}}}})
	return inproc.Serve(t, string(cfg)), alice, bob
}

// answering is a 2026-07-28 client, automatic multi round-trip off, that
// declares elicitation, sampling and roots (caps nil) or exactly caps.
func answering(t *testing.T, g *inproc.Rig, token string, caps *mcp.ClientCapabilities) *mcp.ClientSession {
	refuse := errors.New("the test answers by hand")
	return mcpclient.MustConnect(t, g.MCPURL, mcpclient.Dial{Token: token, Session: &mcp.ClientSessionOptions{ProtocolVersion: mcpclient.ModernVersion},
		Client: &mcp.ClientOptions{Capabilities: caps,
			ElicitationHandler:   func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return nil, refuse },
			CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) { return nil, refuse },
			MultiRoundTrip:       &mcp.MultiRoundTripOptions{Disabled: true}}})
}

// callWith is a tools/call with inputResponses and a requestState.
func callWith(cs *mcp.ClientSession, name, state string, responses mcp.InputResponseMap) (*mcp.CallToolResult, error) {
	return cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}, RequestState: state, InputResponses: responses})
}

var (
	nameAnswer  = &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Alice"}}
	sampled     = &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "Paris"}}
	rootsAnswer = &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: "file:///work", Name: "work"}}}
)

// TestMCPGatewayModernRoundWhole: an upstream's round of three input
// requests (elicitation, sampling, roots) reaches a 2026-07-28 client at
// once under the upstream's keys, with toolnexus's signed requestState
// (the upstream's own state is not in it). Bob cannot answer Alice's round
// with her state; Alice's partial answer gets a fresh input_required for
// what is left (from the first request she left out, in key order); her first state, replayed, resumes nothing; the rest of
// the answers finish the call.
func TestMCPGatewayModernRoundWhole(t *testing.T) {
	g, alice, bob := roundsRig(t)
	const tool = "test_input_required_result_multiple_inputs"
	cs := answering(t, g, alice, nil)
	res := mcpclient.Call(t, cs, tool, map[string]any{})
	keys := slices.Sorted(maps.Keys(res.InputRequests))
	if !res.NeedsInput() || !slices.Equal(keys, []string{"roots_request", "sample_request", "user_name"}) {
		t.Fatalf("the round: %+v, want all three requests under the upstream's keys", res)
	}
	if _, ok := res.InputRequests["roots_request"].(*mcp.ListRootsParams); !ok {
		t.Fatalf("roots_request is %T, want roots/list", res.InputRequests["roots_request"])
	}
	claims, _ := base64.RawURLEncoding.DecodeString(strings.SplitN(res.RequestState, ".", 2)[0])
	if strings.Contains(string(claims), `"multi"`) || !strings.Contains(string(claims), `"u":"alice"`) {
		t.Fatalf("requestState claims %s: want toolnexus's, bound to alice, without the upstream's state", claims)
	}
	first := res.RequestState
	all := mcp.InputResponseMap{"roots_request": rootsAnswer, "sample_request": sampled, "user_name": nameAnswer}

	if _, err := callWith(answering(t, g, bob, nil), tool, first, all); err == nil || !strings.Contains(err.Error(), "another caller") {
		t.Fatalf("bob answering alice's round: %v, want a JSON-RPC error", err)
	}
	// Answers are taken in the upstream's key order up to the first one
	// missing; what is left is asked again.
	res, err := callWith(cs, tool, first, mcp.InputResponseMap{"roots_request": rootsAnswer, "user_name": nameAnswer})
	left := slices.Sorted(maps.Keys(res.InputRequests))
	if err != nil || !res.NeedsInput() || !slices.Equal(left, []string{"sample_request", "user_name"}) || res.RequestState == first {
		t.Fatalf("partial answer: %v %+v, want a fresh input_required for what is left", err, res)
	}
	if again, err := callWith(cs, tool, first, all); err == nil && !again.IsError {
		t.Fatalf("the first state replayed resumed the call: %+v", again)
	}
	res, err = callWith(cs, tool, res.RequestState, mcp.InputResponseMap{"sample_request": sampled, "user_name": nameAnswer})
	if err != nil || res.IsError || res.NeedsInput() || mcpclient.Text(t, res) != "All inputs received" {
		t.Fatalf("the rest answered: %v %+v", err, res)
	}
}

// TestMCPGatewayModernRoundAnswersStayInTheirRound: answers are taken for
// the round they were given for only. A call with inputResponses and no
// requestState answers the first round the upstream asks (the others are
// ignored); the upstream's second round, although the client sent an
// answer under its key too, is asked, not answered with it.
func TestMCPGatewayModernRoundAnswersStayInTheirRound(t *testing.T) {
	g, alice, _ := roundsRig(t)
	const tool = "test_input_required_result_multi_round"
	cs := answering(t, g, alice, nil)
	color := &mcp.ElicitResult{Action: "accept", Content: map[string]any{"color": "blue"}}
	res, err := callWith(cs, tool, "", mcp.InputResponseMap{"name": nameAnswer, "color": color, "other": nameAnswer})
	if err != nil || !res.NeedsInput() || len(res.InputRequests) != 1 || res.InputRequests["color"] == nil {
		t.Fatalf("answers for round 1 and 2 at once: %v %+v, want round 2 asked", err, res)
	}
	res, err = callWith(cs, tool, res.RequestState, mcp.InputResponseMap{"color": color})
	if err != nil || res.IsError || mcpclient.Text(t, res) != "All rounds complete" {
		t.Fatalf("round 2 answered: %v %+v", err, res)
	}
}

// TestMCPGatewayRootsOnlyToClientsThatDeclareThem: an upstream's roots
// request goes to a client that declared roots (in inputRequests at
// 2026-07-28, as roots/list during the call on older protocols, answered
// with the client's own roots) and to no other: -32021 at 2026-07-28, a
// declined request (the call ends) before.
func TestMCPGatewayRootsOnlyToClientsThatDeclareThem(t *testing.T) {
	g, alice, _ := roundsRig(t)
	const tool = "test_input_required_result_list_roots"
	_, err := answering(t, g, alice, &mcp.ClientCapabilities{}).CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), "roots capability") {
		t.Fatalf("2026-07-28 client without roots: %v, want -32021 naming roots", err)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "older", Version: "1"}, nil)
	c.AddRoots(&mcp.Root{URI: "file:///home/alice/project", Name: "project"})
	older, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: g.MCPURL, HTTPClient: mcpclient.HTTPClient(alice), MaxRetries: -1}, mcpclient.SessionProtocol)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = older.Close() })
	if res := mcpclient.Call(t, older, tool, map[string]any{}); res.IsError || mcpclient.Text(t, res) != "Found 1 root(s)" {
		t.Fatalf("older client with roots: %q", mcpclient.Text(t, res))
	}
	none := mcpclient.MustConnect(t, g.MCPURL, mcpclient.Dial{Token: alice, Client: &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}})
	if res := mcpclient.Call(t, none, tool, map[string]any{}); !res.IsError || !strings.Contains(mcpclient.Text(t, res), "declined the roots request") {
		t.Fatalf("older client without roots: %q", mcpclient.Text(t, res))
	}
}

// TestMCPGatewayModernRoundOfAnotherInnerCallIsAsked: a run_code script
// calls two tools whose upstream asks the same key ("user_name") in its
// first round. The client's answer to the first inner call's round is not
// taken for the second's (rounds are named, not counted): the second is
// asked, and the script ends with each answer where it was given.
func TestMCPGatewayModernRoundOfAnotherInnerCallIsAsked(t *testing.T) {
	g, alice, _ := roundsRig(t)
	cs := answering(t, g, alice, nil)
	script := map[string]any{"code": `const a = tools.test_input_required_result_elicitation({});
const b = tools.test_input_required_result_elicitation({second: true});
[a, b];`}
	call := func(state string, name string) *mcp.CallToolResult {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_code", Arguments: script, RequestState: state,
			InputResponses: mcp.InputResponseMap{"user_name": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": name}}}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := mcpclient.Call(t, cs, "run_code", script)
	if !first.NeedsInput() || first.InputRequests["user_name"] == nil {
		t.Fatalf("the first inner call's round: %+v", first)
	}
	second := call(first.RequestState, "Ann")
	if !second.NeedsInput() || second.InputRequests["user_name"] == nil {
		t.Fatalf("the second inner call's round was answered with the first's answer: %+v", second)
	}
	done := call(second.RequestState, "Bo")
	if out := mcpclient.Text(t, done); done.IsError || !strings.Contains(out, "Hello, Ann!") || !strings.Contains(out, "Hello, Bo!") {
		t.Fatalf("the script's result: %q", out)
	}
}

// TestMCPGatewayModernPromptRound: a prompts/get the upstream answers with
// input_required reaches a 2026-07-28 client as the upstream's round, with
// a requestState sealed by toolnexus (the upstream's requests and state
// are not readable in it). A tampered state, Alice's state used by Bob or
// for other arguments, and an answer of the wrong kind are refused with
// -32602; Alice's answer gets the prompt. gRPC, which has no round trip,
// keeps the refusal.
func TestMCPGatewayModernPromptRound(t *testing.T) {
	g, alice, bob := roundsRig(t)
	const prompt = "test_input_required_result_prompt"
	cs := answering(t, g, alice, nil)
	get := func(cs *mcp.ClientSession, state string, args map[string]string, resp mcp.InputResponse) (*mcp.GetPromptResult, error) {
		p := &mcp.GetPromptParams{Name: prompt, Arguments: args, RequestState: state}
		if resp != nil {
			p.InputResponses = mcp.InputResponseMap{"user_context": resp}
		}
		return cs.GetPrompt(context.Background(), p)
	}
	first, err := get(cs, "", nil, nil)
	if err != nil || !first.NeedsInput() || first.InputRequests["user_context"] == nil || !strings.HasPrefix(first.RequestState, "p.") {
		t.Fatalf("prompts/get: %v %+v, want input_required with the upstream's key", err, first)
	}
	sealed, _ := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(first.RequestState, "p."))
	if strings.Contains(string(sealed), "context") || strings.Contains(string(sealed), "alice") {
		t.Fatalf("the sealed state is readable: %q", sealed)
	}
	answer := &mcp.ElicitResult{Action: "accept", Content: map[string]any{"context": "tests"}}
	b := []byte(first.RequestState)
	b[len(b)/2] ^= 1
	for _, tc := range []struct {
		name, state, want string
		cs                *mcp.ClientSession
		args              map[string]string
		resp              mcp.InputResponse
	}{
		{"tampered", string(b), "requestState", cs, nil, answer},
		{"bob with alice's state", first.RequestState, "another caller", answering(t, g, bob, nil), nil, answer},
		{"other arguments", first.RequestState, "another caller", cs, map[string]string{"x": "y"}, answer},
		{"wrong kind of answer", first.RequestState, "not an answer", cs, nil, rootsAnswer},
	} {
		if res, err := get(tc.cs, tc.state, tc.args, tc.resp); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v %+v, want an error saying %q", tc.name, err, res, tc.want)
		}
	}
	res, err := get(cs, first.RequestState, nil, answer)
	if err != nil || res.NeedsInput() || len(res.Messages) != 1 || res.Messages[0].Content.(*mcp.TextContent).Text != "Context: tests" {
		t.Fatalf("alice's answer: %v %+v", err, res)
	}
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+alice)
	_, err = pb.NewFeatureServiceClient(g.Conn).GetPrompt(ctx, &pb.GetPromptRequest{Name: prompt})
	if err == nil || !strings.Contains(err.Error(), "tool calls only") {
		t.Fatalf("gRPC GetPrompt: %v, want the refusal", err)
	}
}
