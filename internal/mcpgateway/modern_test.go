package mcpgateway_test

//lint:file-ignore SA1019 a sampling result is sent on purpose, as the wrong kind of answer to a question.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/internal/testutil/inproc"
	"github.com/toolnexus/toolnexus/internal/testutil/mcpclient"
)

// connectModern opens a go-sdk client on the 2026-07-28 protocol (token ""
// sends none); opts may turn the SDK's automatic multi round-trip off.
func connectModern(t *testing.T, g *inproc.Rig, token string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cs, err := mcpclient.Connect(t, g.MCPURL, mcpclient.Dial{Token: token, Client: opts, Session: &mcp.ClientSessionOptions{ProtocolVersion: mcpclient.ModernVersion}})
	if err != nil {
		t.Fatalf("connect at %s: %v", mcpclient.ModernVersion, err)
	}
	if v := cs.InitializeResult().ProtocolVersion; v != mcpclient.ModernVersion {
		t.Fatalf("negotiated %q, want %q", v, mcpclient.ModernVersion)
	}
	return cs
}

// TestMCPGatewayModernProtocolNextToOlder: one /mcp listener, its default
// (stateful) configuration: a go-sdk client at 2026-07-28 discovers the
// server, lists with cache hints and the registry revision, and calls; a
// client at 2025-06-18 keeps its session and gets the same tools.
func TestMCPGatewayModernProtocolNextToOlder(t *testing.T) {
	t.Parallel()
	g := inproc.Serve(t, `{"debug": true, "builtins": false, "skills": []}`, inproc.Echo("mine"))

	modern := connectModern(t, g, "", nil)
	if modern.ID() != "" {
		t.Errorf("a 2026-07-28 client got session %q; the protocol has none", modern.ID())
	}
	lr, err := modern.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := mcpclient.Names(lr.Tools)
	if len(names) == 0 || !slices.IsSorted(names) {
		t.Fatalf("tools/list at %s: %v (want a non-empty list in byte order)", mcpclient.ModernVersion, names)
	}
	if lr.TTLMs != 30_000 || lr.CacheScope != "public" {
		t.Errorf("cache hints: ttlMs %d cacheScope %q, want 30000 public", lr.TTLMs, lr.CacheScope)
	}
	if rev, _ := lr.Meta["toolnexus/revision"].(float64); rev < 1 {
		t.Errorf("tools/list _meta: %v, want toolnexus/revision", lr.Meta)
	}
	res := mcpclient.Call(t, modern, "debug_echo", map[string]any{"text": "modern"})
	if res.IsError || !strings.Contains(mcpclient.Text(t, res), "modern") {
		t.Fatalf("call at %s: %q", mcpclient.ModernVersion, mcpclient.Text(t, res))
	}

	old := mcp.NewClient(&mcp.Implementation{Name: "old", Version: "1"}, nil)
	ocs, err := old.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: g.MCPURL, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	if err != nil {
		t.Fatal(err)
	}
	defer ocs.Close()
	if v := ocs.InitializeResult().ProtocolVersion; v != "2025-06-18" || ocs.ID() == "" {
		t.Fatalf("older client: version %q session %q, want 2025-06-18 with a session", v, ocs.ID())
	}
	if got := mcpclient.Names(mcpclient.List(t, ocs)); !slices.Equal(got, names) {
		t.Errorf("older client lists %v, the modern one %v", got, names)
	}
	if res := mcpclient.Call(t, ocs, "debug_echo", map[string]any{"text": "old"}); res.IsError || !strings.Contains(mcpclient.Text(t, res), "old") {
		t.Fatalf("older client's call: %q", mcpclient.Text(t, res))
	}
}

// modernPost sends one 2026-07-28 request as bare HTTP, with the routing
// headers given.
func modernPost(t *testing.T, url, method, name, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", mcpclient.ModernVersion)
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body) // the body read to its end or first error
	return resp.StatusCode, string(b)
}

// TestMCPGatewayModernRoutingHeadersChecked: a 2026-07-28 request whose
// Mcp-Method or Mcp-Name disagrees with its body — what a proxy routing
// on the headers would be fooled by — is refused with HTTP 400 and
// JSON-RPC -32020, and the tool does not run; the same request with
// matching headers is served.
func TestMCPGatewayModernRoutingHeadersChecked(t *testing.T) {
	t.Parallel()
	g := inproc.Serve(t, `{"debug": true, "builtins": false, "skills": []}`)
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"debug_echo","arguments":{"text":"hi"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	for _, tc := range []struct{ name, method, tool string }{
		{"method lies", "tools/list", "debug_echo"},
		{"name lies", "tools/call", "debug_sleep"},
		{"name missing", "tools/call", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := modernPost(t, g.MCPURL, tc.method, tc.tool, call)
			if status != http.StatusBadRequest || !strings.Contains(body, "-32020") {
				t.Fatalf("got %d %s, want 400 with -32020", status, body)
			}
		})
	}
	status, body := modernPost(t, g.MCPURL, "tools/call", "debug_echo", call)
	if status != http.StatusOK || !strings.Contains(body, `hi`) || strings.Contains(body, `"error"`) {
		t.Fatalf("matching headers: %d %s", status, body)
	}
}

// TestMCPGatewayModernQuestionIsInputRequired: the question tool suspends;
// a 2026-07-28 client with the SDK's automatic retry off gets
// input_required with a form elicitation and a requestState, and its retry
// with inputResponses resumes the call. With the automatic retry on, the
// SDK's elicitation handler answers and CallTool returns the result.
func TestMCPGatewayModernQuestionIsInputRequired(t *testing.T) {
	t.Parallel()
	g := inproc.Serve(t, `{"builtins": true, "skills": []}`)
	var args map[string]any
	_ = json.Unmarshal([]byte(mcpclient.QuestionArgs), &args)
	answer := func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"q1": "green", "q2": "it is calm"}}, nil
	}

	t.Run("manual retry", func(t *testing.T) {
		cs := connectModern(t, g, "", &mcp.ClientOptions{ElicitationHandler: answer, MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})
		res := mcpclient.Call(t, cs, "question", args)
		if !res.NeedsInput() || res.RequestState == "" || len(res.InputRequests) != 1 {
			t.Fatalf("suspended question: %+v, want input_required", res)
		}
		var id string
		var ep *mcp.ElicitParams
		for k, v := range res.InputRequests {
			id, ep, _ = k, v.(*mcp.ElicitParams), true
		}
		if ep == nil || !strings.HasPrefix(id, "question_") || !strings.Contains(ep.Message, "Pick a color?") {
			t.Fatalf("input request %q: %+v", id, ep)
		}
		schema, _ := json.Marshal(ep.RequestedSchema)
		if !strings.Contains(string(schema), `"enum":["red","green"]`) || !strings.Contains(string(schema), `"title":"Color"`) {
			t.Errorf("form schema: %s", schema)
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "question", Arguments: args, RequestState: res.RequestState,
			InputResponses: mcp.InputResponseMap{id: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"q1": "red", "q2": "warm"}}}})
		if err != nil || res.IsError || res.NeedsInput() || mcpclient.Text(t, res) != `{"Pick a color?":"red","Why?":"warm"}` {
			t.Fatalf("resumed: %v %+v", err, res)
		}
	})
	t.Run("automatic retry", func(t *testing.T) {
		cs := connectModern(t, g, "", &mcp.ClientOptions{ElicitationHandler: answer})
		res := mcpclient.Call(t, cs, "question", args)
		if res.IsError || mcpclient.Text(t, res) != `{"Pick a color?":"green","Why?":"it is calm"}` {
			t.Fatalf("answered by the SDK's handler: %q", mcpclient.Text(t, res))
		}
	})
	t.Run("declined", func(t *testing.T) {
		cs := connectModern(t, g, "", &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}})
		res := mcpclient.Call(t, cs, "question", args)
		if !res.IsError || !strings.Contains(mcpclient.Text(t, res), "declined") {
			t.Fatalf("declined: %q", mcpclient.Text(t, res))
		}
	})
	t.Run("client without elicitation keeps the _meta contract", func(t *testing.T) {
		cs := connectModern(t, g, "", nil)
		res := mcpclient.Call(t, cs, "question", args)
		if res.NeedsInput() || !res.IsError || res.Meta["toolnexus/pending"] == nil {
			t.Fatalf("no elicitation: %+v", res)
		}
	})
}

// TestMCPGatewayModernRequestStateAttacks: a requestState cannot be forged
// or moved. Alice's suspended question is retried with a tampered state, a
// state of our own invention, by Bob, by Alice in another toolnexus
// session, with other arguments, and with an answer of the wrong kind:
// each is refused with a JSON-RPC error (-32602, HTTP 400) saying why and
// the question stays unanswered; inputResponses without a state resume
// nothing (the call is asked afresh); Alice's own retry then resumes it.
func TestMCPGatewayModernRequestStateAttacks(t *testing.T) {
	const alice, bob = "mcp-alice-secret-0001", "mcp-bob-secret-000002"
	t.Setenv("TN_MCP_ALICE", alice)
	t.Setenv("TN_MCP_BOB", bob)
	g := inproc.Serve(t, `{"builtins": true, "skills": [], "auth": {"tokens": [
		{"name": "alice", "token": "${TN_MCP_ALICE}"}, {"name": "bob", "token": "${TN_MCP_BOB}"}]}}`)
	var args map[string]any
	_ = json.Unmarshal([]byte(mcpclient.QuestionArgs), &args)
	aliceS1 := mcpclient.Modern(t, g.MCPURL, "Authorization", "Bearer "+alice, "Toolnexus-Session", "s1")
	state, id := mcpclient.Suspend(t, aliceS1, "question", args)
	good := &mcp.ElicitResult{Action: "accept", Content: map[string]any{"q1": "red", "q2": "warm"}}

	p64, mac, _ := strings.Cut(state, ".")
	claims, err := base64.RawURLEncoding.DecodeString(p64)
	if err != nil {
		t.Fatal(err)
	}
	asBob := base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(claims), `"u":"alice"`, `"u":"bob"`, 1)))
	otherArgs := map[string]any{"questions": []any{map[string]any{"question": "Delete everything?"}}}
	for _, tc := range []struct {
		name  string
		cs    *mcp.ClientSession
		args  map[string]any
		state string
		resp  mcp.InputResponse
		want  string
	}{
		{"claims rewritten for bob", mcpclient.Modern(t, g.MCPURL, "Authorization", "Bearer "+bob, "Toolnexus-Session", "s1"), args, asBob + "." + mac, good, "signature does not match"},
		{"state invented", aliceS1, args, base64.RawURLEncoding.EncodeToString([]byte(`{"p":"`+id+`","k":"question","t":"question"}`)) + ".AAAA", good, "signature does not match"},
		{"not a state", aliceS1, args, "opaque", good, "not one this server issued"},
		{"moved to bob", mcpclient.Modern(t, g.MCPURL, "Authorization", "Bearer "+bob, "Toolnexus-Session", "s1"), args, state, good, "another caller"},
		{"moved to another session", mcpclient.Modern(t, g.MCPURL, "Authorization", "Bearer "+alice, "Toolnexus-Session", "s2"), args, state, good, "another caller"},
		{"other arguments", aliceS1, otherArgs, state, good, "another caller"},
		{"wrong kind of answer", aliceS1, args, state, &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "x"}}, "not an answer"},
		{"answer under another key", aliceS1, args, state, nil, "no answer to"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			responses := mcp.InputResponseMap{id: tc.resp}
			if tc.resp == nil {
				responses = mcp.InputResponseMap{"user_name": good}
			}
			res, err := tc.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "question", Arguments: tc.args, RequestState: tc.state, InputResponses: responses})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "Bad Request") {
				t.Fatalf("got %v (%+v), want a JSON-RPC error saying %q", err, res, tc.want)
			}
		})
	}
	t.Run("no state: asked afresh", func(t *testing.T) {
		res := mcpclient.Retry(t, aliceS1, "question", args, "", id, good)
		if !res.NeedsInput() || res.RequestState == "" || len(res.InputRequests) != 1 {
			t.Fatalf("inputResponses without a state: %+v, want the question asked again, unanswered", res)
		}
	})
	res := mcpclient.Retry(t, aliceS1, "question", args, state, id, good)
	if res.IsError || mcpclient.Text(t, res) != `{"Pick a color?":"red","Why?":"warm"}` {
		t.Fatalf("alice's own retry: %q", mcpclient.Text(t, res))
	}
}
