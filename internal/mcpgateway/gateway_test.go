package mcpgateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protojson"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/inproc"
	"github.com/toolnexus/toolnexus/internal/testutil/mcpclient"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

func TestMCPGatewayListsWhatListToolsListsAndCallsEverySource(t *testing.T) {
	t.Parallel()
	up, _ := mcpclient.Upstream(t)
	cfg := fmt.Sprintf(`{"debug": true, "skills": [], "builtins": {"tools": {"bash": false, "webfetch": false}},
		"mcpServers": {"up": {"url": %q}},
		"server": {"mcp": {"name": "gateway-under-test", "version": "9.9.9"}}}`, up+"/mcp")
	g := inproc.Serve(t, cfg, inproc.Echo("native_echo"))
	if err := os.MkdirAll(g.Workspace(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(g.Workspace(), "notes.txt"), []byte("line one\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	var initName, initVersion string
	cs := g.MustConnect(t, "", nil)
	if ir := cs.InitializeResult(); ir != nil && ir.ServerInfo != nil {
		initName, initVersion = ir.ServerInfo.Name, ir.ServerInfo.Version
	}
	if initName != "gateway-under-test" || initVersion != "9.9.9" {
		t.Errorf("serverInfo = %q %q, want server.mcp.name and version", initName, initVersion)
	}
	if caps := cs.InitializeResult().Capabilities; caps == nil || caps.Tools == nil || !caps.Tools.ListChanged {
		t.Errorf("capabilities %+v: want tools.listChanged", caps)
	}

	// tools/list equals ListTools: same names in the same (byte) order,
	// same descriptions, same schemas, the source in _meta.
	got := mcpclient.List(t, cs)
	want, err := g.Registry.ListTools(context.Background(), &pb.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want.GetTools()) {
		t.Fatalf("tools/list has %d tools %v, ListTools %d", len(got), mcpclient.Names(got), len(want.GetTools()))
	}
	if !sort.StringsAreSorted(mcpclient.Names(got)) {
		t.Errorf("tools/list not in byte order: %v", mcpclient.Names(got))
	}
	for i, w := range want.GetTools() {
		m := got[i]
		if m.Name != w.GetName() || m.Description != w.GetDescription() || m.Meta["toolnexus/source"] != w.GetSource() {
			t.Errorf("tool %d: MCP {%s %q %v}, gRPC {%s %q %s}", i, m.Name, m.Description, m.Meta, w.GetName(), w.GetDescription(), w.GetSource())
		}
		ms, _ := json.Marshal(m.InputSchema)
		ws, _ := protojson.Marshal(w.GetInputSchema())
		if !mcpclient.JSONEqual(t, ms, ws) {
			t.Errorf("%s schema over MCP %s, over gRPC %s", m.Name, ms, ws)
		}
	}
	for _, n := range []string{"debug_echo", "native_echo", "read", "up_greet"} {
		if !strings.Contains(","+strings.Join(mcpclient.Names(got), ",")+",", ","+n+",") {
			t.Errorf("%s missing from tools/list %v", n, mcpclient.Names(got))
		}
	}

	res := mcpclient.Call(t, cs, "native_echo", map[string]any{"n": 7})
	if res.IsError || mcpclient.Text(t, res) != `{"n":7}` || res.Meta["toolnexus/outcome"] != "ok" {
		t.Errorf("native: %v %q %v", res.IsError, mcpclient.Text(t, res), res.Meta)
	}
	res = mcpclient.Call(t, cs, "debug_echo", map[string]any{"message": "hi"})
	if res.IsError || !strings.Contains(mcpclient.Text(t, res), "hi") {
		t.Errorf("debug_echo: %v %q", res.IsError, mcpclient.Text(t, res))
	}
	grpcEcho, err := g.Registry.Execute(context.Background(), &pb.ExecuteRequest{Name: "debug_echo", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{"message":"hi"}`}})
	if err != nil || grpcEcho.GetResult().GetOutput() != mcpclient.Text(t, res) {
		t.Errorf("debug_echo over gRPC %q (%v), over MCP %q: the same call must give the same output", grpcEcho.GetResult().GetOutput(), err, mcpclient.Text(t, res))
	}
	// The MCP session is a toolnexus session: its files are its own, not
	// the shared workspace's.
	res = mcpclient.Call(t, cs, "read", map[string]any{"path": "notes.txt"})
	if !res.IsError {
		t.Errorf("an MCP session reads the shared workspace: %q", mcpclient.Text(t, res))
	}
	if res = mcpclient.Call(t, cs, "write", map[string]any{"path": "notes.txt", "content": "line one, mine\n"}); res.IsError {
		t.Errorf("builtin write: %q", mcpclient.Text(t, res))
	}
	res = mcpclient.Call(t, cs, "read", map[string]any{"path": "notes.txt"})
	if res.IsError || !strings.Contains(mcpclient.Text(t, res), "line one, mine") {
		t.Errorf("builtin read: %v %q", res.IsError, mcpclient.Text(t, res))
	}
	res = mcpclient.Call(t, cs, "up_greet", map[string]any{"who": "gateway"})
	if res.IsError || mcpclient.Text(t, res) != "hello, gateway" {
		t.Errorf("proxied MCP tool: %v %q", res.IsError, mcpclient.Text(t, res))
	}

	// Tool failures are isError results with the outcome in _meta.
	res = mcpclient.Call(t, cs, "debug_fail", map[string]any{"message": "nope"})
	if !res.IsError || res.Meta["toolnexus/outcome"] != "tool_error" {
		t.Errorf("debug_fail: %v %q %v", res.IsError, mcpclient.Text(t, res), res.Meta)
	}
	res = mcpclient.Call(t, cs, "read", map[string]any{"path": 7})
	if !res.IsError || res.Meta["toolnexus/outcome"] != "invalid_arguments" {
		t.Errorf("bad arguments: %v %q %v", res.IsError, mcpclient.Text(t, res), res.Meta)
	}

	body := g.Scrape(t)
	for _, c := range [][]string{
		{`source="custom"`, `tool="native_echo"`, `outcome="ok"`},
		{`source="debug"`, `tool="debug_echo"`, `outcome="ok"`},
		{`tool="up_greet"`, `outcome="ok"`},
		{`tool="debug_fail"`, `outcome="tool_error"`},
	} {
		if testutil.MetricLine(body, "toolnexus_tool_calls_total", append(c, `protocol="mcp"`)...) == "" {
			t.Errorf("no toolnexus_tool_calls_total sample with %v and protocol=\"mcp\"", c)
		}
	}
	if testutil.MetricLine(body, "toolnexus_tool_calls_total", `tool="debug_echo"`, `protocol="grpc"`) == "" {
		t.Error("the gRPC call must be counted under protocol=\"grpc\"")
	}
}

func TestMCPGatewayPanicIsAnErrorResultAndServingGoesOn(t *testing.T) {
	t.Parallel()
	g := inproc.Serve(t, inproc.DebugOnly)
	cs := g.MustConnect(t, "", nil)
	res := mcpclient.Call(t, cs, "debug_panic", map[string]any{"message": "kaboom"})
	if !res.IsError || res.Meta["toolnexus/outcome"] != "panic" || !strings.Contains(mcpclient.Text(t, res), "kaboom") {
		t.Fatalf("panic: isError=%v %q %v", res.IsError, mcpclient.Text(t, res), res.Meta)
	}
	res = mcpclient.Call(t, cs, "debug_echo", map[string]any{"message": "still here"})
	if res.IsError || !strings.Contains(mcpclient.Text(t, res), "still here") {
		t.Fatalf("after a panic: %v %q", res.IsError, mcpclient.Text(t, res))
	}
	if testutil.MetricLine(g.Scrape(t), "toolnexus_tool_calls_total", `tool="debug_panic"`, `outcome="panic"`, `protocol="mcp"`) == "" {
		t.Error("the panic is not counted with protocol=\"mcp\"")
	}
}

func TestMCPGatewayUnknownToolIsInvalidParams(t *testing.T) {
	t.Parallel()
	g := inproc.Serve(t, inproc.DebugOnly)
	cs := g.MustConnect(t, "", nil)
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "no_such_tool"})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(werr.Message, "no_such_tool") {
		t.Fatalf("unknown tool: %v, want the SDK's invalid-params error naming it", err)
	}
}

func TestMCPGatewayArgumentsAndResultShape(t *testing.T) {
	t.Parallel()
	meta := tool.Must(tool.New("with_meta", func(_ context.Context, c tool.Call) tool.Result {
		return tool.Result{Output: "done: " + string(c.Arguments), Metadata: map[string]any{"rows": 3, "path": "a/b"}}
	}))
	g := inproc.Serve(t, `{"builtins": false, "skills": []}`, meta)
	cs := g.MustConnect(t, "", nil)
	// Absent and null arguments are the empty object.
	for _, args := range []any{nil, json.RawMessage("null")} {
		res := mcpclient.Call(t, cs, "with_meta", args)
		if res.IsError || mcpclient.Text(t, res) != "done: {}" {
			t.Errorf("arguments %v: %v %q", args, res.IsError, mcpclient.Text(t, res))
		}
	}
	res := mcpclient.Call(t, cs, "with_meta", json.RawMessage(`{"x":1.50}`))
	if mcpclient.Text(t, res) != `done: {"x":1.50}` {
		t.Errorf("arguments must reach the tool verbatim: %q", mcpclient.Text(t, res))
	}
	md, _ := json.Marshal(res.Meta["toolnexus/metadata"])
	if !mcpclient.JSONEqual(t, md, []byte(`{"rows":3,"path":"a/b"}`)) || res.StructuredContent != nil {
		t.Errorf("metadata in _meta: %s; structuredContent %v (want none)", md, res.StructuredContent)
	}
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "with_meta", Arguments: []int{1}})
	if err == nil {
		// The SDK may let it through: then it must be an invalid-arguments result.
		res := mcpclient.Call(t, cs, "with_meta", []int{1})
		if !res.IsError || res.Meta["toolnexus/outcome"] != "invalid_arguments" {
			t.Errorf("array arguments: %v %q", res.IsError, mcpclient.Text(t, res))
		}
	}
}

func TestMCPGatewaySuspendAndAnswer(t *testing.T) {
	t.Parallel()
	ask := tool.Must(tool.New("ask", func(_ context.Context, c tool.Call) tool.Result {
		if c.Answer == nil {
			return tool.Suspend(tool.Pending{ID: "p-1", Kind: "confirm", Prompt: "Proceed?", Data: map[string]any{"n": 1}})
		}
		return tool.Success(fmt.Sprintf("answered %s ok=%v data=%v", c.Answer.ID, c.Answer.OK, c.Answer.Data), nil)
	}))
	g := inproc.Serve(t, `{"builtins": false, "skills": []}`, ask)
	cs := g.MustConnect(t, "", nil)
	res := mcpclient.Call(t, cs, "ask", nil)
	pend, _ := json.Marshal(res.Meta["toolnexus/pending"])
	if !res.IsError || res.Meta["toolnexus/outcome"] != "pending" || mcpclient.Text(t, res) != "Proceed?" ||
		!mcpclient.JSONEqual(t, pend, []byte(`{"id":"p-1","kind":"confirm","prompt":"Proceed?","data":{"n":1}}`)) {
		t.Fatalf("suspend: %v %q %v", res.IsError, mcpclient.Text(t, res), res.Meta)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask",
		Meta: mcp.Meta{"toolnexus/answer": map[string]any{"id": "p-1", "ok": true, "data": "yes"}}})
	if err != nil || res.IsError || mcpclient.Text(t, res) != "answered p-1 ok=true data=yes" {
		t.Fatalf("resume: %v %v", err, res)
	}
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask", Meta: mcp.Meta{"toolnexus/answer": "yes"}})
	if err != nil || !res.IsError || !strings.Contains(mcpclient.Text(t, res), "toolnexus/answer") {
		t.Fatalf("malformed answer: %v %v", err, res)
	}
}

func TestMCPGatewayListChangedOnRegistryChangeAndReload(t *testing.T) {
	t.Parallel()
	g := inproc.Serve(t, inproc.DebugOnly, inproc.Echo("mine"))
	opts, changed := mcpclient.ListChanged()
	cs := g.MustConnect(t, "", opts)
	other := g.MustConnect(t, "", nil) // a second session sees the same set
	if got := strings.Join(mcpclient.Names(mcpclient.List(t, cs)), ","); got != "debug_echo,debug_fail,debug_panic,debug_sleep,mine" {
		t.Fatalf("initial list %s", got)
	}

	// A layer replaced in the registry (what any source does).
	layer := registry.LayerID{Kind: sources.KindNative, Name: "extra"}
	if err := g.Core.Registry().Replace(layer, []tool.Tool{inproc.Echo("added")}); err != nil {
		t.Fatal(err)
	}
	mcpclient.AwaitTools(t, cs, changed, "a layer replace", "added", "debug_echo", "debug_fail", "debug_panic", "debug_sleep", "mine")
	if res := mcpclient.Call(t, cs, "added", map[string]any{"a": 1}); res.IsError {
		t.Fatalf("new tool: %q", mcpclient.Text(t, res))
	}
	if got := strings.Join(mcpclient.Names(mcpclient.List(t, other)), ","); !strings.HasPrefix(got, "added,") {
		t.Errorf("other session lists %s", got)
	}

	// A reload that turns the debug tools off.
	if _, err := g.Rewrite(t, `{"builtins": false, "skills": []}`); err != nil {
		t.Fatal(err)
	}
	mcpclient.AwaitTools(t, cs, changed, "a reload", "added", "mine")
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "debug_echo"}); err == nil {
		t.Error("a removed tool must be unknown to tools/call")
	}

	// A reload that only narrows server.mcp.tools changes nothing in the
	// registry, yet the MCP list follows.
	if _, err := g.Rewrite(t, `{"builtins": false, "skills": [], "server": {"mcp": {"tools": ["mi*"]}}}`); err != nil {
		t.Fatal(err)
	}
	mcpclient.AwaitTools(t, cs, changed, "a reload of server.mcp.tools", "mine")
}

func TestMCPGatewayListsThousandsOfToolsAcrossPages(t *testing.T) {
	t.Parallel()
	tools := make([]tool.Tool, 2500)
	for i := range tools {
		tools[i] = inproc.Echo(fmt.Sprintf("t%04d", len(tools)-1-i)) // registered in reverse
	}
	g := inproc.Serve(t, `{"builtins": false, "skills": []}`, tools...)
	cs := g.MustConnect(t, "", nil)
	first, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if first.NextCursor == "" || len(first.Tools) >= len(tools) {
		t.Fatalf("first page has %d tools and cursor %q: want paging", len(first.Tools), first.NextCursor)
	}
	got := mcpclient.Names(mcpclient.List(t, cs))
	if len(got) != len(tools) || !sort.StringsAreSorted(got) || got[0] != "t0000" {
		t.Fatalf("listed %d tools (sorted %v), want %d in byte order", len(got), sort.StringsAreSorted(got), len(tools))
	}
}

func TestMCPGatewayToolsFilter(t *testing.T) {
	t.Parallel()
	g := inproc.Serve(t, `{"debug": true, "builtins": false, "skills": [], "server": {"mcp": {"tools": ["debug_e*", "source:custom"]}}}`,
		inproc.Echo("n1"), inproc.Echo("n2"))
	cs := g.MustConnect(t, "", nil)
	if got := strings.Join(mcpclient.Names(mcpclient.List(t, cs)), ","); got != "debug_echo,n1,n2" {
		t.Fatalf("filtered list %s, want debug_echo,n1,n2", got)
	}
	// A tool filtered out of MCP is not there at all.
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "debug_fail"})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("filtered-out tool: %v", err)
	}
}

func TestMCPGatewayAuth(t *testing.T) {
	const agent, ops = "mcp-agent-secret-01", "mcp-ops-secret-0002"
	t.Setenv("TN_MCP_AGENT", agent)
	t.Setenv("TN_MCP_OPS", ops)
	g := inproc.Serve(t, `{"debug": true, "builtins": false, "skills": [], "auth": {"tokens": [
		{"name": "agent", "token": "${TN_MCP_AGENT}", "tools": ["debug_echo", "source:custom"]},
		{"name": "ops", "token": "${TN_MCP_OPS}"}]}}`, inproc.Echo("mine"))

	// Refused without a token, with a bad one, with a malformed header.
	for _, h := range []string{"", "Bearer wrong-token-value", "Basic " + agent} {
		req, _ := http.NewRequest(http.MethodPost, g.MCPURL, strings.NewReader(mcpclient.InitializeBody))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if h != "" {
			req.Header.Set("Authorization", h)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("Authorization %q: %d %q, want 401 with WWW-Authenticate", h, resp.StatusCode, b)
		}
		if strings.Contains(string(b), agent) || strings.Contains(string(b), "wrong-token-value") {
			t.Errorf("the 401 body echoes a token: %q", b)
		}
	}
	if _, err := g.Connect(t, "", nil); err == nil {
		t.Fatal("the go-sdk client connected without a token")
	}

	// The agent's allowlist filters tools/list and denies calls.
	cs := g.MustConnect(t, agent, nil)
	if got := strings.Join(mcpclient.Names(mcpclient.List(t, cs)), ","); got != "debug_echo,mine" {
		t.Fatalf("agent sees %s, want debug_echo,mine", got)
	}
	grpcList, err := g.Registry.ListTools(metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+agent), &pb.ListToolsRequest{})
	if err != nil || len(grpcList.GetTools()) != 2 {
		t.Fatalf("gRPC ListTools for the same token: %v %v", err, grpcList)
	}
	if res := mcpclient.Call(t, cs, "mine", map[string]any{"k": "v"}); res.IsError {
		t.Errorf("allowed call: %q", mcpclient.Text(t, res))
	}
	// A tool outside the allowlist answers as a name the server never had.
	mcpclient.MustBeUnknown(t, cs, "debug_fail")
	if testutil.MetricLine(g.Scrape(t), "toolnexus_tool_calls_total", `tool="debug_fail"`, `outcome="denied"`, `protocol="mcp"`) == "" {
		t.Error("the denied call is not counted")
	}

	// A token without a list sees everything.
	all := g.MustConnect(t, ops, nil)
	if n := len(mcpclient.List(t, all)); n != 5 {
		t.Errorf("ops sees %d tools, want all 5", n)
	}

	// A session belongs to the token that opened it: another valid token
	// cannot ride on it.
	code, hdr, _ := mcpclient.RawPost(t, g.MCPURL, agent, "", mcpclient.InitializeBody)
	sid := hdr.Get("Mcp-Session-Id")
	if code != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d, session %q", code, sid)
	}
	if code, _, body := mcpclient.RawPost(t, g.MCPURL, ops, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); code != http.StatusForbidden {
		t.Errorf("another token on agent's session: %d %s, want 403", code, body)
	}
}

// The end-to-end test: the official TypeScript SDK client
// (@modelcontextprotocol/sdk, installed in e2e/node) lists and calls.
func TestMCPGatewayWithTheTypeScriptClient(t *testing.T) {
	node, nodeDir := testutil.NodeE2E(t)
	const token = "ts-client-secret-42"
	t.Setenv("TN_MCP_TS", token)
	g := inproc.Serve(t, `{"debug": true, "builtins": false, "skills": [], "auth": {"tokens": [
		{"name": "ts", "token": "${TN_MCP_TS}", "tools": ["debug_*"]}]}}`, inproc.Echo("hidden"))

	run := func(tok string) (map[string]any, string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "mcp-client.mjs"), nodeDir, g.MCPURL, "debug_echo", `{"message":"from typescript"}`)
		cmd.Env = append(os.Environ(), "TOOLNEXUS_TOKEN="+tok)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var out map[string]any
		if err == nil {
			if jerr := json.Unmarshal(stdout.Bytes(), &out); jerr != nil {
				return nil, stderr.String(), fmt.Errorf("stdout %q: %v", stdout.String(), jerr)
			}
		}
		return out, stderr.String(), err
	}
	out, stderr, err := run(token)
	if err != nil {
		t.Fatalf("node client: %v\nstderr:\n%s", err, stderr)
	}
	tools, _ := out["tools"].([]any)
	var names []string
	for _, n := range tools {
		names = append(names, fmt.Sprint(n))
	}
	if strings.Join(names, ",") != "debug_echo,debug_fail,debug_panic,debug_sleep" {
		t.Errorf("TypeScript client lists %v", names)
	}
	res, _ := out["result"].(map[string]any)
	content, _ := res["content"].([]any)
	if res["isError"] == true || len(content) != 1 || !strings.Contains(fmt.Sprint(content[0]), "from typescript") {
		t.Errorf("TypeScript client call result %v", res)
	}
	if meta, _ := res["_meta"].(map[string]any); meta["toolnexus/outcome"] != "ok" {
		t.Errorf("_meta %v", res["_meta"])
	}
	if _, stderr, err := run("not-the-token"); err == nil || !strings.Contains(stderr, "invalid bearer token") {
		t.Errorf("a bad token must fail the TypeScript client: %v\n%s", err, stderr)
	}
}

func TestMCPGatewayCallerCancellationReachesTheTool(t *testing.T) {
	t.Parallel()
	entered, sawCancel := make(chan struct{}), make(chan struct{})
	wait := tool.Must(tool.New("wait", func(ctx context.Context, _ tool.Call) tool.Result {
		close(entered)
		<-ctx.Done()
		close(sawCancel)
		return tool.ContextResult(ctx, "wait")
	}))
	g := inproc.Serve(t, `{"builtins": false, "skills": []}`, wait, inproc.Echo("after"))
	cs := g.MustConnect(t, "", nil)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wait"})
		errc <- err
	}()
	<-entered
	cancel() // the client sends notifications/cancelled
	<-sawCancel
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	// The session is still good after a cancelled call.
	if res := mcpclient.Call(t, cs, "after", map[string]any{"ok": true}); res.IsError {
		t.Fatalf("call after a cancelled one: %q", mcpclient.Text(t, res))
	}
}

func TestMCPGatewayReloadedTokenAppliesToOpenSessions(t *testing.T) {
	const secret = "reloaded-token-secret-1"
	t.Setenv("TN_MCP_RELOAD", secret)
	cfg := func(pattern string) string {
		return `{"debug": true, "builtins": false, "skills": [], "auth": {"tokens": [{"name": "a", "token": "${TN_MCP_RELOAD}", "tools": ["` + pattern + `"]}]}}`
	}
	g := inproc.Serve(t, cfg("debug_echo"))
	cs := g.MustConnect(t, secret, nil)
	if got := strings.Join(mcpclient.Names(mcpclient.List(t, cs)), ","); got != "debug_echo" {
		t.Fatalf("before reload: %s", got)
	}
	if _, err := g.Rewrite(t, cfg("debug_f*")); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(mcpclient.Names(mcpclient.List(t, cs)), ","); got != "debug_fail" {
		t.Fatalf("after reload the same session lists %s, want debug_fail", got)
	}
	mcpclient.MustBeUnknown(t, cs, "debug_echo") // the reloaded token no longer allows it
}

func TestMCPGatewaySchemaGetsTheObjectTypeMCPRequires(t *testing.T) {
	t.Parallel()
	lax := tool.Must(tool.New("lax", func(context.Context, tool.Call) tool.Result { return tool.Success("ok", nil) },
		tool.WithInputSchema(json.RawMessage(`{"properties":{"a":{"type":"string"}},"required":["a"]}`))))
	strict := tool.Must(tool.New("strict", func(context.Context, tool.Call) tool.Result { return tool.Success("ok", nil) },
		tool.WithInputSchema(json.RawMessage(`{"type":"object","properties":{"b":{"type":"integer","minimum":1}},"additionalProperties":false}`))))
	g := inproc.Serve(t, `{"builtins": false, "skills": []}`, lax, strict)
	cs := g.MustConnect(t, "", nil)
	got := map[string][]byte{}
	for _, tl := range mcpclient.List(t, cs) {
		got[tl.Name], _ = json.Marshal(tl.InputSchema)
	}
	if !mcpclient.JSONEqual(t, got["lax"], []byte(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`)) {
		t.Errorf("lax schema over MCP: %s", got["lax"])
	}
	if !mcpclient.JSONEqual(t, got["strict"], []byte(`{"type":"object","properties":{"b":{"type":"integer","minimum":1}},"additionalProperties":false}`)) {
		t.Errorf("an object schema must pass unchanged: %s", got["strict"])
	}
}

func TestMCPGatewayLogsSessionsAtDebugAndNeverATokenValue(t *testing.T) {
	const secret = "log-check-secret-99"
	t.Setenv("TN_MCP_LOG", secret)
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		var logs testutil.Buffer
		g := inproc.Start(t, `{"debug": true, "builtins": false, "skills": [], "auth": {"tokens": [{"name": "logged", "token": "${TN_MCP_LOG}"}]}}`,
			inproc.Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: level}))})
		cs := g.MustConnect(t, secret, nil)
		mcpclient.Call(t, cs, "debug_echo", map[string]any{"message": "m"})
		_, _ = g.Connect(t, "wrong-"+secret, nil)
		cs.Close()
		g.Close()
		out := logs.String()
		if strings.Contains(out, secret) {
			t.Fatalf("a token value reached the log:\n%s", out)
		}
		if level == slog.LevelInfo && strings.Contains(out, "session initialized") {
			t.Errorf("SDK session chatter at info:\n%s", out)
		}
		if level == slog.LevelDebug && (!strings.Contains(out, "level=DEBUG msg=\"session initialized\"") ||
			!strings.Contains(out, `msg="finished MCP call" mcp.method=tools/call tool=debug_echo source=debug outcome=ok`) || !strings.Contains(out, "caller=logged")) {
			t.Errorf("at debug the sessions and calls are logged:\n%s", out)
		}
	}
}

// A change that starts at an upstream MCP server travels the whole way: its
// list_changed makes the mcp source republish, the registry changes, and
// the gateway's clients get their own list_changed.
func TestMCPGatewayRelaysAnUpstreamToolListChange(t *testing.T) {
	t.Parallel()
	url, up := mcpclient.Upstream(t)
	g := inproc.Serve(t, fmt.Sprintf(`{"builtins": false, "skills": [], "mcpServers": {"up": {"url": %q}}}`, url+"/mcp"))
	opts, changed := mcpclient.ListChanged()
	cs := g.MustConnect(t, "", opts)
	if got := strings.Join(mcpclient.Names(mcpclient.List(t, cs)), ","); got != "up_greet" {
		t.Fatalf("initial list %s", got)
	}
	up.AddTool(&mcp.Tool{Name: "wave", Description: "Wave.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "👋"}}}, nil
		})
	mcpclient.AwaitTools(t, cs, changed, "an upstream server added a tool", "up_greet", "up_wave")
	if res := mcpclient.Call(t, cs, "up_wave", nil); res.IsError || mcpclient.Text(t, res) != "👋" {
		t.Fatalf("the new upstream tool through the gateway: %v %q", res.IsError, mcpclient.Text(t, res))
	}
}
