package server_test

//lint:file-ignore SA1019 a sampling result is sent on purpose, as the wrong kind of answer to a question.

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/server"
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
		if ep == nil || !strings.HasPrefix(id, "question_") || !strings.Contains(ep.Message, "Pick a color?") {
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

// headerTransport adds fixed headers to every request.
type headerTransport map[string]string

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// modernClient opens a 2026-07-28 client with the automatic multi round-trip
// off that sends headers on every request (Authorization, Toolnexus-Session).
func modernClient(t *testing.T, url string, headers headerTransport) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "attacker", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, errors.New("the test answers by hand")
		},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: headers}, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: modernVersion})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// suspendQuestion calls the question tool with args and returns the
// input_required result's requestState and input request id.
func suspendQuestion(t *testing.T, cs *mcp.ClientSession, args map[string]any) (state, id string) {
	t.Helper()
	res := callMCP(t, cs, "question", args)
	if !res.NeedsInput() || len(res.InputRequests) != 1 {
		t.Fatalf("want input_required, got %+v", res)
	}
	for k := range res.InputRequests {
		id = k
	}
	return res.RequestState, id
}

// retryQuestion retries a question call with state and an accepted answer.
func retryQuestion(t *testing.T, cs *mcp.ClientSession, args map[string]any, state, id string, resp mcp.InputResponse) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "question", Arguments: args, RequestState: state,
		InputResponses: mcp.InputResponseMap{id: resp}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestMCPGatewayModernRequestStateAttacks: a requestState cannot be forged
// or moved. Alice's suspended question is retried with a tampered state, a
// state of our own invention, by Bob, by Alice in another toolnexus
// session, with other arguments, and with an answer of the wrong kind:
// each is refused saying why and the question stays unanswered; Alice's own
// retry then resumes it.
func TestMCPGatewayModernRequestStateAttacks(t *testing.T) {
	const alice, bob = "mcp-alice-secret-0001", "mcp-bob-secret-000002"
	t.Setenv("TN_MCP_ALICE", alice)
	t.Setenv("TN_MCP_BOB", bob)
	g := startGateway(t, `{"builtins": true, "skills": [], "auth": {"tokens": [
		{"name": "alice", "token": "${TN_MCP_ALICE}"}, {"name": "bob", "token": "${TN_MCP_BOB}"}]}}`)
	var args map[string]any
	_ = json.Unmarshal([]byte(questionArgs), &args)
	aliceS1 := modernClient(t, g.url, headerTransport{"Authorization": "Bearer " + alice, "Toolnexus-Session": "s1"})
	state, id := suspendQuestion(t, aliceS1, args)
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
		{"claims rewritten for bob", modernClient(t, g.url, headerTransport{"Authorization": "Bearer " + bob, "Toolnexus-Session": "s1"}), args, asBob + "." + mac, good, "signature does not match"},
		{"state invented", aliceS1, args, base64.RawURLEncoding.EncodeToString([]byte(`{"p":"`+id+`","k":"question","t":"question"}`)) + ".AAAA", good, "signature does not match"},
		{"not a state", aliceS1, args, "opaque", good, "not one this server issued"},
		{"no state", aliceS1, args, "", good, "without requestState"},
		{"moved to bob", modernClient(t, g.url, headerTransport{"Authorization": "Bearer " + bob, "Toolnexus-Session": "s1"}), args, state, good, "another caller"},
		{"moved to another session", modernClient(t, g.url, headerTransport{"Authorization": "Bearer " + alice, "Toolnexus-Session": "s2"}), args, state, good, "another caller"},
		{"other arguments", aliceS1, otherArgs, state, good, "another caller"},
		{"wrong kind of answer", aliceS1, args, state, &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "x"}}, "not an answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := retryQuestion(t, tc.cs, tc.args, tc.state, id, tc.resp)
			if !res.IsError || res.Meta["toolnexus/outcome"] != "invalid_arguments" || !strings.Contains(text(t, res), tc.want) {
				t.Fatalf("got %q (%v), want a refusal saying %q", text(t, res), res.Meta, tc.want)
			}
		})
	}
	res := retryQuestion(t, aliceS1, args, state, id, good)
	if res.IsError || text(t, res) != `{"Pick a color?":"red","Why?":"warm"}` {
		t.Fatalf("alice's own retry: %q", text(t, res))
	}
}

// TestMCPGatewayModernResumeOnAnotherReplica: two replicas with
// sessions.shared, one server.mcp.stateKeyFile and one store of suspended
// calls (cluster.redis: a question is an entry of it). A question
// suspended on one is resumed on the other, directly and through nginx
// round robin (where each request of the client lands on the next
// replica); a replica with another key refuses the state.
func TestMCPGatewayModernResumeOnAnotherReplica(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	redis := testutil.StartRedis(t)
	keyFile, otherKey := filepath.Join(dir, "state.key"), filepath.Join(dir, "other.key")
	for _, f := range []string{keyFile, otherKey} {
		if err := os.WriteFile(f, []byte(rand.Text()+rand.Text()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var grpcAddrs, mcpAddrs []string
	for i, key := range []string{keyFile, keyFile, otherKey} {
		cfg := fmt.Sprintf(`{"builtins": true, "skills": [], "sessions": {"shared": true, "root": %q}, "server": {"mcp": {"stateKeyFile": %q}},
			"cluster": {"redis": {"url": %q, "timeout": 2000}}}`, dir, key, redis.URL)
		srv, _, _ := launch(t, cfg, func(o *server.Options) {
			o.MetricsListen = "-"
			o.MCPListen = "127.0.0.1:0"
		})
		if i < 2 {
			grpcAddrs = append(grpcAddrs, srv.Addr().String())
		}
		mcpAddrs = append(mcpAddrs, "http://"+srv.MCPAddr().String()+server.MCPPath)
	}
	var args map[string]any
	_ = json.Unmarshal([]byte(questionArgs), &args)
	good := &mcp.ElicitResult{Action: "accept", Content: map[string]any{"q1": "green", "q2": "calm"}}

	state, id := suspendQuestion(t, modernClient(t, mcpAddrs[0], headerTransport{}), args)
	if res := retryQuestion(t, modernClient(t, mcpAddrs[2], headerTransport{}), args, state, id, good); !res.IsError || !strings.Contains(text(t, res), "signature") {
		t.Fatalf("a replica with another key: %q", text(t, res))
	}
	if res := retryQuestion(t, modernClient(t, mcpAddrs[1], headerTransport{}), args, state, id, good); res.IsError || text(t, res) != `{"Pick a color?":"green","Why?":"calm"}` {
		t.Fatalf("resumed on the other replica: %q", text(t, res))
	}

	nginxPath(t)
	httpHosts := []string{strings.TrimSuffix(strings.TrimPrefix(mcpAddrs[0], "http://"), server.MCPPath), strings.TrimSuffix(strings.TrimPrefix(mcpAddrs[1], "http://"), server.MCPPath)}
	_, lb := startNginxWith(t, nginxRoundRobin, grpcAddrs, httpHosts)
	cs := modernClient(t, "http://"+lb+server.MCPPath, headerTransport{})
	for i := range 3 { // suspend and resume land on different replicas in turn
		state, id := suspendQuestion(t, cs, args)
		if res := retryQuestion(t, cs, args, state, id, good); res.IsError || text(t, res) != `{"Pick a color?":"green","Why?":"calm"}` {
			t.Fatalf("round %d through nginx: %q", i, text(t, res))
		}
	}
}
