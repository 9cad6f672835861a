package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// modernVersion is the stateless MCP protocol the gateway serves next to
// the older ones.
const modernVersion = "2026-07-28"

// connectModern opens a go-sdk client on the 2026-07-28 protocol (token ""
// sends none); opts may turn the SDK's automatic multi round-trip off.
func (g *gw) connectModern(t *testing.T, token string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{}
	if token != "" {
		hc.Transport = bearerTransport{token}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "toolnexus-modern-test", Version: "1"}, opts)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: g.url, HTTPClient: hc, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: modernVersion})
	if err != nil {
		t.Fatalf("connect at %s: %v", modernVersion, err)
	}
	t.Cleanup(func() { cs.Close() })
	if v := cs.InitializeResult().ProtocolVersion; v != modernVersion {
		t.Fatalf("negotiated %q, want %q", v, modernVersion)
	}
	return cs
}

// TestMCPGatewayModernProtocolNextToOlder: one /mcp listener, its default
// (stateful) configuration: a go-sdk client at 2026-07-28 discovers the
// server, lists with cache hints and the registry revision, and calls; a
// client at 2025-06-18 keeps its session and gets the same tools.
func TestMCPGatewayModernProtocolNextToOlder(t *testing.T) {
	t.Parallel()
	g := startGateway(t, `{"debug": true, "builtins": false, "skills": []}`, echoTool("mine"))

	modern := g.connectModern(t, "", nil)
	if modern.ID() != "" {
		t.Errorf("a 2026-07-28 client got session %q; the protocol has none", modern.ID())
	}
	lr, err := modern.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	names := mcpNames(lr.Tools)
	if len(names) == 0 || !slices.IsSorted(names) {
		t.Fatalf("tools/list at %s: %v (want a non-empty list in byte order)", modernVersion, names)
	}
	if lr.TTLMs != 30_000 || lr.CacheScope != "public" {
		t.Errorf("cache hints: ttlMs %d cacheScope %q, want 30000 public", lr.TTLMs, lr.CacheScope)
	}
	if rev, _ := lr.Meta["toolnexus/revision"].(float64); rev < 1 {
		t.Errorf("tools/list _meta: %v, want toolnexus/revision", lr.Meta)
	}
	res := callMCP(t, modern, "debug_echo", map[string]any{"text": "modern"})
	if res.IsError || !strings.Contains(text(t, res), "modern") {
		t.Fatalf("call at %s: %q", modernVersion, text(t, res))
	}

	old := mcp.NewClient(&mcp.Implementation{Name: "old", Version: "1"}, nil)
	ocs, err := old.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: g.url, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	if err != nil {
		t.Fatal(err)
	}
	defer ocs.Close()
	if v := ocs.InitializeResult().ProtocolVersion; v != "2025-06-18" || ocs.ID() == "" {
		t.Fatalf("older client: version %q session %q, want 2025-06-18 with a session", v, ocs.ID())
	}
	if got := mcpNames(listMCP(t, ocs)); !slices.Equal(got, names) {
		t.Errorf("older client lists %v, the modern one %v", got, names)
	}
	if res := callMCP(t, ocs, "debug_echo", map[string]any{"text": "old"}); res.IsError || !strings.Contains(text(t, res), "old") {
		t.Fatalf("older client's call: %q", text(t, res))
	}
}

// modernPost sends one 2026-07-28 request as bare HTTP, with the routing
// headers given.
func modernPost(t *testing.T, url, method, name, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", modernVersion)
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, b.String()
}

// TestMCPGatewayModernRoutingHeadersChecked: a 2026-07-28 request whose
// Mcp-Method or Mcp-Name disagrees with its body — what a proxy routing
// on the headers would be fooled by — is refused with HTTP 400 and
// JSON-RPC -32020, and the tool does not run; the same request with
// matching headers is served.
func TestMCPGatewayModernRoutingHeadersChecked(t *testing.T) {
	t.Parallel()
	g := startGateway(t, `{"debug": true, "builtins": false, "skills": []}`)
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"debug_echo","arguments":{"text":"hi"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
	for _, tc := range []struct{ name, method, tool string }{
		{"method lies", "tools/list", "debug_echo"},
		{"name lies", "tools/call", "debug_sleep"},
		{"name missing", "tools/call", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := modernPost(t, g.url, tc.method, tc.tool, call)
			if status != http.StatusBadRequest || !strings.Contains(body, "-32020") {
				t.Fatalf("got %d %s, want 400 with -32020", status, body)
			}
		})
	}
	status, body := modernPost(t, g.url, "tools/call", "debug_echo", call)
	if status != http.StatusOK || !strings.Contains(body, `hi`) || strings.Contains(body, `"error"`) {
		t.Fatalf("matching headers: %d %s", status, body)
	}
}

// questionArgs asks two questions, the first with options.
const questionArgs = `{"questions":[{"question":"Pick a color?","header":"Color","options":["red","green"]},{"question":"Why?"}]}`

// TestMCPGatewayModernQuestionIsInputRequired: the question tool suspends;
// a 2026-07-28 client with the SDK's automatic retry off gets
// input_required with a form elicitation and a requestState, and its retry
// with inputResponses resumes the call. With the automatic retry on, the
// SDK's elicitation handler answers and CallTool returns the result.
func TestMCPGatewayModernQuestionIsInputRequired(t *testing.T) {
	t.Parallel()
	g := startGateway(t, `{"builtins": true, "skills": []}`)
	var args map[string]any
	_ = json.Unmarshal([]byte(questionArgs), &args)
	answer := func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"q1": "green", "q2": "it is calm"}}, nil
	}

	t.Run("manual retry", func(t *testing.T) {
		cs := g.connectModern(t, "", &mcp.ClientOptions{ElicitationHandler: answer, MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})
		res := callMCP(t, cs, "question", args)
		if !res.NeedsInput() || res.RequestState == "" || len(res.InputRequests) != 1 {
			t.Fatalf("suspended question: %+v, want input_required", res)
		}
		var id string
		var ep *mcp.ElicitParams
		for k, v := range res.InputRequests {
			id, ep, _ = k, v.(*mcp.ElicitParams), true
		}
		if ep == nil || !strings.HasPrefix(id, "question-") || !strings.Contains(ep.Message, "Pick a color?") {
			t.Fatalf("input request %q: %+v", id, ep)
		}
		schema, _ := json.Marshal(ep.RequestedSchema)
		if !strings.Contains(string(schema), `"enum":["red","green"]`) || !strings.Contains(string(schema), `"title":"Color"`) {
			t.Errorf("form schema: %s", schema)
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "question", Arguments: args, RequestState: res.RequestState,
			InputResponses: mcp.InputResponseMap{id: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"q1": "red", "q2": "warm"}}}})
		if err != nil || res.IsError || res.NeedsInput() || text(t, res) != `{"Pick a color?":"red","Why?":"warm"}` {
			t.Fatalf("resumed: %v %+v", err, res)
		}
	})
	t.Run("automatic retry", func(t *testing.T) {
		cs := g.connectModern(t, "", &mcp.ClientOptions{ElicitationHandler: answer})
		res := callMCP(t, cs, "question", args)
		if res.IsError || text(t, res) != `{"Pick a color?":"green","Why?":"it is calm"}` {
			t.Fatalf("answered by the SDK's handler: %q", text(t, res))
		}
	})
	t.Run("declined", func(t *testing.T) {
		cs := g.connectModern(t, "", &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}})
		res := callMCP(t, cs, "question", args)
		if !res.IsError || !strings.Contains(text(t, res), "declined") {
			t.Fatalf("declined: %q", text(t, res))
		}
	})
	t.Run("client without elicitation keeps the _meta contract", func(t *testing.T) {
		cs := g.connectModern(t, "", nil)
		res := callMCP(t, cs, "question", args)
		if res.NeedsInput() || !res.IsError || res.Meta["toolnexus/pending"] == nil {
			t.Fatalf("no elicitation: %+v", res)
		}
	})
}
