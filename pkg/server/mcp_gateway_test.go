package server_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/testutil"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protojson"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/server"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// gw is a real server with the MCP gateway on, on loopback TCP.
type gw struct {
	srv     *server.Server
	cfgPath string
	url     string // http://127.0.0.1:PORT/mcp
	ws      string // the builtin tools' workspace
	grpc    pb.RegistryServiceClient
	stop    func()
}

// startGateway serves cfgJSON with the gateway on an ephemeral port.
func startGateway(t testing.TB, cfgJSON string, native ...tool.Tool) *gw {
	t.Helper()
	return startGatewayLogging(t, slog.New(slog.NewTextHandler(io.Discard, nil)), cfgJSON, native...)
}

func startGatewayLogging(t testing.TB, log *slog.Logger, cfgJSON string, native ...tool.Tool) *gw {
	t.Helper()
	srv, cfgPath, stopServer := launch(t, cfgJSON, func(o *server.Options) {
		o.MCPListen = "127.0.0.1:0"
		o.Logger = log
		o.Native = native
	})
	conn, err := grpc.NewClient(srv.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	g := &gw{srv: srv, cfgPath: cfgPath, ws: filepath.Join(filepath.Dir(cfgPath), "ws"),
		url: "http://" + srv.MCPAddr().String() + server.MCPPath, grpc: pb.NewRegistryServiceClient(conn)}
	g.stop = func() {
		conn.Close()
		stopServer()
	}
	t.Cleanup(g.stop)
	return g
}

// bearerTransport adds the Authorization header to every request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// sessionProtocol pins a go-sdk client to 2025-11-25, the newest protocol
// with sessions (initialize, Mcp-Session-Id, logging/setLevel): the tests
// using it are about those. The go-sdk's default, 2026-07-28, has none; its
// tests are in mcp_modern_test.go.
var sessionProtocol = &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}

// connect opens a go-sdk client session (token "" sends none); opts may
// carry a list_changed handler. The session closes with the test.
func (g *gw) connect(t testing.TB, token string, opts *mcp.ClientOptions) (*mcp.ClientSession, error) {
	t.Helper()
	return g.connectRetrying(t, token, opts, -1) // fail at once: no retries
}

func (g *gw) connectRetrying(t testing.TB, token string, opts *mcp.ClientOptions, retries int) (*mcp.ClientSession, error) {
	t.Helper()
	hc := &http.Client{}
	if token != "" {
		hc.Transport = bearerTransport{token}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "toolnexus-test", Version: "1"}, opts)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: g.url, HTTPClient: hc, MaxRetries: retries}, sessionProtocol)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { cs.Close() })
	return cs, nil
}

func (g *gw) mustConnect(t testing.TB, token string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	cs, err := g.connect(t, token, opts)
	if err != nil {
		t.Fatalf("MCP connect: %v", err)
	}
	return cs
}

func (g *gw) scrape(t *testing.T) string {
	t.Helper()
	resp, err := http.Get("http://" + g.srv.MetricsAddr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func callMCP(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: protocol error %v; tool failures must be isError results", name, err)
	}
	return res
}

// text is the one text part a gateway result must have.
func text(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("content has %d parts, want exactly one text part: %+v", len(res.Content), res.Content)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content part is %T, want *mcp.TextContent", res.Content[0])
	}
	return tc.Text
}

func listMCP(t *testing.T, cs *mcp.ClientSession) []*mcp.Tool {
	t.Helper()
	var out []*mcp.Tool
	for tl, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		out = append(out, tl)
	}
	return out
}

func mcpNames(tools []*mcp.Tool) []string {
	out := make([]string, len(tools))
	for i, tl := range tools {
		out[i] = tl.Name
	}
	return out
}

// upstream is a real MCP server (the go-sdk over streamable HTTP) for the
// gateway to proxy through the mcp source.
func upstream(t *testing.T) string {
	t.Helper()
	url, _ := upstreamServer(t)
	return url
}

func upstreamServer(t *testing.T) (string, *mcp.Server) {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "upstream", Version: "1"}, nil)
	type in struct {
		Who string `json:"who" jsonschema:"who to greet"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "greet", Description: "Greet someone."}, func(_ context.Context, _ *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hello, " + a.Who}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts.URL, s
}

// jsonEqual compares two JSON documents by value.
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}

func TestMCPGatewayListsWhatListToolsListsAndCallsEverySource(t *testing.T) {
	t.Parallel()
	up := upstream(t)
	cfg := fmt.Sprintf(`{"debug": true, "skills": [], "builtins": {"tools": {"bash": false, "webfetch": false}},
		"mcpServers": {"up": {"url": %q}},
		"server": {"mcp": {"name": "gateway-under-test", "version": "9.9.9"}}}`, up+"/mcp")
	g := startGateway(t, cfg, echoTool("native_echo"))
	if err := os.MkdirAll(g.ws, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(g.ws, "notes.txt"), []byte("line one\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	var initName, initVersion string
	cs := g.mustConnect(t, "", nil)
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
	got := listMCP(t, cs)
	want, err := g.grpc.ListTools(context.Background(), &pb.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want.GetTools()) {
		t.Fatalf("tools/list has %d tools %v, ListTools %d", len(got), mcpNames(got), len(want.GetTools()))
	}
	if !sort.StringsAreSorted(mcpNames(got)) {
		t.Errorf("tools/list not in byte order: %v", mcpNames(got))
	}
	for i, w := range want.GetTools() {
		m := got[i]
		if m.Name != w.GetName() || m.Description != w.GetDescription() || m.Meta["toolnexus/source"] != w.GetSource() {
			t.Errorf("tool %d: MCP {%s %q %v}, gRPC {%s %q %s}", i, m.Name, m.Description, m.Meta, w.GetName(), w.GetDescription(), w.GetSource())
		}
		ms, _ := json.Marshal(m.InputSchema)
		ws, _ := protojson.Marshal(w.GetInputSchema())
		if !jsonEqual(t, ms, ws) {
			t.Errorf("%s schema over MCP %s, over gRPC %s", m.Name, ms, ws)
		}
	}
	for _, n := range []string{"debug_echo", "native_echo", "read", "up_greet"} {
		if !strings.Contains(","+strings.Join(mcpNames(got), ",")+",", ","+n+",") {
			t.Errorf("%s missing from tools/list %v", n, mcpNames(got))
		}
	}

	res := callMCP(t, cs, "native_echo", map[string]any{"n": 7})
	if res.IsError || text(t, res) != `{"n":7}` || res.Meta["toolnexus/outcome"] != "ok" {
		t.Errorf("native: %v %q %v", res.IsError, text(t, res), res.Meta)
	}
	res = callMCP(t, cs, "debug_echo", map[string]any{"message": "hi"})
	if res.IsError || !strings.Contains(text(t, res), "hi") {
		t.Errorf("debug_echo: %v %q", res.IsError, text(t, res))
	}
	grpcEcho, err := g.grpc.Execute(context.Background(), &pb.ExecuteRequest{Name: "debug_echo", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{"message":"hi"}`}})
	if err != nil || grpcEcho.GetResult().GetOutput() != text(t, res) {
		t.Errorf("debug_echo over gRPC %q (%v), over MCP %q: the same call must give the same output", grpcEcho.GetResult().GetOutput(), err, text(t, res))
	}
	// The MCP session is a toolnexus session: its files are its own, not
	// the shared workspace's.
	res = callMCP(t, cs, "read", map[string]any{"path": "notes.txt"})
	if !res.IsError {
		t.Errorf("an MCP session reads the shared workspace: %q", text(t, res))
	}
	if res = callMCP(t, cs, "write", map[string]any{"path": "notes.txt", "content": "line one, mine\n"}); res.IsError {
		t.Errorf("builtin write: %q", text(t, res))
	}
	res = callMCP(t, cs, "read", map[string]any{"path": "notes.txt"})
	if res.IsError || !strings.Contains(text(t, res), "line one, mine") {
		t.Errorf("builtin read: %v %q", res.IsError, text(t, res))
	}
	res = callMCP(t, cs, "up_greet", map[string]any{"who": "gateway"})
	if res.IsError || text(t, res) != "hello, gateway" {
		t.Errorf("proxied MCP tool: %v %q", res.IsError, text(t, res))
	}

	// Tool failures are isError results with the outcome in _meta.
	res = callMCP(t, cs, "debug_fail", map[string]any{"message": "nope"})
	if !res.IsError || res.Meta["toolnexus/outcome"] != "tool_error" {
		t.Errorf("debug_fail: %v %q %v", res.IsError, text(t, res), res.Meta)
	}
	res = callMCP(t, cs, "read", map[string]any{"path": 7})
	if !res.IsError || res.Meta["toolnexus/outcome"] != "invalid_arguments" {
		t.Errorf("bad arguments: %v %q %v", res.IsError, text(t, res), res.Meta)
	}

	body := g.scrape(t)
	for _, c := range [][]string{
		{`source="custom"`, `tool="native_echo"`, `outcome="ok"`},
		{`source="debug"`, `tool="debug_echo"`, `outcome="ok"`},
		{`tool="up_greet"`, `outcome="ok"`},
		{`tool="debug_fail"`, `outcome="tool_error"`},
	} {
		if metricLine(body, "toolnexus_tool_calls_total", append(c, `protocol="mcp"`)...) == "" {
			t.Errorf("no toolnexus_tool_calls_total sample with %v and protocol=\"mcp\"", c)
		}
	}
	if metricLine(body, "toolnexus_tool_calls_total", `tool="debug_echo"`, `protocol="grpc"`) == "" {
		t.Error("the gRPC call must be counted under protocol=\"grpc\"")
	}
}

func TestMCPGatewayPanicIsAnErrorResultAndServingGoesOn(t *testing.T) {
	t.Parallel()
	g := startGateway(t, debugOnly)
	cs := g.mustConnect(t, "", nil)
	res := callMCP(t, cs, "debug_panic", map[string]any{"message": "kaboom"})
	if !res.IsError || res.Meta["toolnexus/outcome"] != "panic" || !strings.Contains(text(t, res), "kaboom") {
		t.Fatalf("panic: isError=%v %q %v", res.IsError, text(t, res), res.Meta)
	}
	res = callMCP(t, cs, "debug_echo", map[string]any{"message": "still here"})
	if res.IsError || !strings.Contains(text(t, res), "still here") {
		t.Fatalf("after a panic: %v %q", res.IsError, text(t, res))
	}
	if metricLine(g.scrape(t), "toolnexus_tool_calls_total", `tool="debug_panic"`, `outcome="panic"`, `protocol="mcp"`) == "" {
		t.Error("the panic is not counted with protocol=\"mcp\"")
	}
}

func TestMCPGatewayUnknownToolIsInvalidParams(t *testing.T) {
	t.Parallel()
	g := startGateway(t, debugOnly)
	cs := g.mustConnect(t, "", nil)
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
	g := startGateway(t, `{"builtins": false, "skills": []}`, meta)
	cs := g.mustConnect(t, "", nil)
	// Absent and null arguments are the empty object.
	for _, args := range []any{nil, json.RawMessage("null")} {
		res := callMCP(t, cs, "with_meta", args)
		if res.IsError || text(t, res) != "done: {}" {
			t.Errorf("arguments %v: %v %q", args, res.IsError, text(t, res))
		}
	}
	res := callMCP(t, cs, "with_meta", json.RawMessage(`{"x":1.50}`))
	if text(t, res) != `done: {"x":1.50}` {
		t.Errorf("arguments must reach the tool verbatim: %q", text(t, res))
	}
	md, _ := json.Marshal(res.Meta["toolnexus/metadata"])
	if !jsonEqual(t, md, []byte(`{"rows":3,"path":"a/b"}`)) || res.StructuredContent != nil {
		t.Errorf("metadata in _meta: %s; structuredContent %v (want none)", md, res.StructuredContent)
	}
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "with_meta", Arguments: []int{1}})
	if err == nil {
		// The SDK may let it through: then it must be an invalid-arguments result.
		res := callMCP(t, cs, "with_meta", []int{1})
		if !res.IsError || res.Meta["toolnexus/outcome"] != "invalid_arguments" {
			t.Errorf("array arguments: %v %q", res.IsError, text(t, res))
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
	g := startGateway(t, `{"builtins": false, "skills": []}`, ask)
	cs := g.mustConnect(t, "", nil)
	res := callMCP(t, cs, "ask", nil)
	pend, _ := json.Marshal(res.Meta["toolnexus/pending"])
	if !res.IsError || res.Meta["toolnexus/outcome"] != "pending" || text(t, res) != "Proceed?" ||
		!jsonEqual(t, pend, []byte(`{"id":"p-1","kind":"confirm","prompt":"Proceed?","data":{"n":1}}`)) {
		t.Fatalf("suspend: %v %q %v", res.IsError, text(t, res), res.Meta)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask",
		Meta: mcp.Meta{"toolnexus/answer": map[string]any{"id": "p-1", "ok": true, "data": "yes"}}})
	if err != nil || res.IsError || text(t, res) != "answered p-1 ok=true data=yes" {
		t.Fatalf("resume: %v %v", err, res)
	}
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask", Meta: mcp.Meta{"toolnexus/answer": "yes"}})
	if err != nil || !res.IsError || !strings.Contains(text(t, res), "toolnexus/answer") {
		t.Fatalf("malformed answer: %v %v", err, res)
	}
}

// listChanged returns client options whose list_changed notifications
// arrive on the channel.
func listChanged() (*mcp.ClientOptions, <-chan struct{}) {
	ch := make(chan struct{}, 16)
	return &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		select {
		case ch <- struct{}{}:
		default:
		}
	}}, ch
}

// await waits for a notification. The timeout only guards against a hang;
// the notification normally arrives within milliseconds.
func await(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(20 * time.Second):
		t.Fatalf("no notifications/tools/list_changed after %s", what)
	}
}

// awaitTools re-lists after each notification until the names are want:
// notifications are debounced, so one may cover several changes and the
// first may arrive before the last change.
func awaitTools(t *testing.T, cs *mcp.ClientSession, ch <-chan struct{}, what string, want ...string) {
	t.Helper()
	for {
		await(t, ch, what)
		if got := strings.Join(mcpNames(listMCP(t, cs)), ","); got == strings.Join(want, ",") {
			return
		}
	}
}

func TestMCPGatewayListChangedOnRegistryChangeAndReload(t *testing.T) {
	t.Parallel()
	g := startGateway(t, debugOnly, echoTool("mine"))
	opts, changed := listChanged()
	cs := g.mustConnect(t, "", opts)
	other := g.mustConnect(t, "", nil) // a second session sees the same set
	if got := strings.Join(mcpNames(listMCP(t, cs)), ","); got != "debug_echo,debug_fail,debug_panic,debug_sleep,mine" {
		t.Fatalf("initial list %s", got)
	}

	// A layer replaced in the registry (what any source does).
	layer := registry.LayerID{Kind: sources.KindNative, Name: "extra"}
	if err := g.srv.Registry().Replace(layer, []tool.Tool{echoTool("added")}); err != nil {
		t.Fatal(err)
	}
	awaitTools(t, cs, changed, "a layer replace", "added", "debug_echo", "debug_fail", "debug_panic", "debug_sleep", "mine")
	if res := callMCP(t, cs, "added", map[string]any{"a": 1}); res.IsError {
		t.Fatalf("new tool: %q", text(t, res))
	}
	if got := strings.Join(mcpNames(listMCP(t, other)), ","); !strings.HasPrefix(got, "added,") {
		t.Errorf("other session lists %s", got)
	}

	// A reload that turns the debug tools off.
	if err := os.WriteFile(g.cfgPath, []byte(`{"builtins": false, "skills": []}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := g.srv.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	awaitTools(t, cs, changed, "a reload", "added", "mine")
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "debug_echo"}); err == nil {
		t.Error("a removed tool must be unknown to tools/call")
	}

	// A reload that only narrows server.mcp.tools changes nothing in the
	// registry, yet the MCP list follows.
	if err := os.WriteFile(g.cfgPath, []byte(`{"builtins": false, "skills": [], "server": {"mcp": {"tools": ["mi*"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := g.srv.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	awaitTools(t, cs, changed, "a reload of server.mcp.tools", "mine")
}

func TestMCPGatewayListsThousandsOfToolsAcrossPages(t *testing.T) {
	t.Parallel()
	tools := make([]tool.Tool, 2500)
	for i := range tools {
		tools[i] = echoTool(fmt.Sprintf("t%04d", len(tools)-1-i)) // registered in reverse
	}
	g := startGateway(t, `{"builtins": false, "skills": []}`, tools...)
	cs := g.mustConnect(t, "", nil)
	first, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if first.NextCursor == "" || len(first.Tools) >= len(tools) {
		t.Fatalf("first page has %d tools and cursor %q: want paging", len(first.Tools), first.NextCursor)
	}
	got := mcpNames(listMCP(t, cs))
	if len(got) != len(tools) || !sort.StringsAreSorted(got) || got[0] != "t0000" {
		t.Fatalf("listed %d tools (sorted %v), want %d in byte order", len(got), sort.StringsAreSorted(got), len(tools))
	}
}

func TestMCPGatewayToolsFilter(t *testing.T) {
	t.Parallel()
	g := startGateway(t, `{"debug": true, "builtins": false, "skills": [], "server": {"mcp": {"tools": ["debug_e*", "source:custom"]}}}`,
		echoTool("n1"), echoTool("n2"))
	cs := g.mustConnect(t, "", nil)
	if got := strings.Join(mcpNames(listMCP(t, cs)), ","); got != "debug_echo,n1,n2" {
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
	g := startGateway(t, `{"debug": true, "builtins": false, "skills": [], "auth": {"tokens": [
		{"name": "agent", "token": "${TN_MCP_AGENT}", "tools": ["debug_echo", "source:custom"]},
		{"name": "ops", "token": "${TN_MCP_OPS}"}]}}`, echoTool("mine"))

	// Refused without a token, with a bad one, with a malformed header.
	for _, h := range []string{"", "Bearer wrong-token-value", "Basic " + agent} {
		req, _ := http.NewRequest(http.MethodPost, g.url, strings.NewReader(initializeBody))
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
	if _, err := g.connect(t, "", nil); err == nil {
		t.Fatal("the go-sdk client connected without a token")
	}

	// The agent's allowlist filters tools/list and denies calls.
	cs := g.mustConnect(t, agent, nil)
	if got := strings.Join(mcpNames(listMCP(t, cs)), ","); got != "debug_echo,mine" {
		t.Fatalf("agent sees %s, want debug_echo,mine", got)
	}
	grpcList, err := g.grpc.ListTools(bearerCtx(agent), &pb.ListToolsRequest{})
	if err != nil || len(grpcList.GetTools()) != 2 {
		t.Fatalf("gRPC ListTools for the same token: %v %v", err, grpcList)
	}
	if res := callMCP(t, cs, "mine", map[string]any{"k": "v"}); res.IsError {
		t.Errorf("allowed call: %q", text(t, res))
	}
	// A tool outside the allowlist answers as a name the server never had.
	mustBeUnknownMCP(t, cs, "debug_fail")
	if metricLine(g.scrape(t), "toolnexus_tool_calls_total", `tool="debug_fail"`, `outcome="denied"`, `protocol="mcp"`) == "" {
		t.Error("the denied call is not counted")
	}

	// A token without a list sees everything.
	all := g.mustConnect(t, ops, nil)
	if n := len(listMCP(t, all)); n != 5 {
		t.Errorf("ops sees %d tools, want all 5", n)
	}

	// A session belongs to the token that opened it: another valid token
	// cannot ride on it.
	code, hdr, _ := rawPost(t, g.url, agent, "", initializeBody)
	sid := hdr.Get("Mcp-Session-Id")
	if code != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d, session %q", code, sid)
	}
	if code, _, body := rawPost(t, g.url, ops, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); code != http.StatusForbidden {
		t.Errorf("another token on agent's session: %d %s, want 403", code, body)
	}
}

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// rawPost sends one JSON-RPC message to the gateway as plain HTTP.
func rawPost(t *testing.T, url, token, session, body string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func bearerCtx(tok string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tok)
}

func TestMCPGatewayOffUnlessConfigured(t *testing.T) {
	t.Parallel()
	f := start(t, debugOnly)
	if f.srv.MCPAddr() != nil || f.srv.MCPHandler() != nil {
		t.Fatalf("gateway on without server.mcp.listen: %v", f.srv.MCPAddr())
	}
}

func TestMCPGatewayNonLoopbackNeedsAuthOrTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "c.json")
	if err := os.WriteFile(p, []byte(`{"builtins": false, "skills": [], "server": {"mcp": {"listen": "0.0.0.0:0"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := server.New(server.Options{ConfigPath: p, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	var ce *server.ConfigError
	if !errors.As(err, &ce) || ce.Key != "server.mcp.listen" || !strings.Contains(err.Error(), "--insecure") {
		t.Fatalf("non-loopback MCP listener without auth: %v, want a config error naming server.mcp.listen", err)
	}
}

func TestMCPGatewayShutdownLetsACallFinish(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}), make(chan struct{})
	slow := tool.Must(tool.New("slow", func(ctx context.Context, _ tool.Call) tool.Result {
		close(entered)
		select {
		case <-release:
			return tool.Success("finished", nil)
		case <-ctx.Done():
			return tool.ContextResult(ctx, "slow")
		}
	}))
	g := startGateway(t, `{"builtins": false, "skills": []}`, slow)
	opts, changed := listChanged()
	// The go-sdk client fails every pending call as soon as its event stream
	// breaks without a retry left, which can beat the call's own response
	// when shutdown closes the sessions; give it its default retries.
	cs, err := g.connectRetrying(t, "", opts, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The client opens its event stream in the background; a list_changed
	// arriving proves it is up, so shutdown cannot race its opening (the
	// client would then give up on the whole session).
	if err := g.srv.Registry().Replace(registry.LayerID{Kind: sources.KindNative, Name: "x"}, []tool.Tool{echoTool("x")}); err != nil {
		t.Fatal(err)
	}
	await(t, changed, "a layer replace")
	got := make(chan *mcp.CallToolResult, 1)
	var callErr error
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "slow"})
		callErr = err
		got <- res
	}()
	<-entered
	stopped := make(chan struct{})
	go func() { g.stop(); close(stopped) }()
	// Shutdown waits for the call; release it once new requests are refused.
	for {
		resp, err := http.Post(g.url, "application/json", strings.NewReader(`{}`))
		if err != nil {
			break // listener closed
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable {
			break
		}
	}
	close(release)
	<-stopped
	res := <-got
	if res == nil || res.IsError || text(t, res) != "finished" {
		t.Fatalf("in-flight call across shutdown: %+v, %v", res, callErr)
	}
}

// selfSigned issues a server certificate for 127.0.0.1 from a fresh CA;
// the pool trusts it.
func selfSigned(t *testing.T) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	authority := testutil.NewCA(t, "gateway")
	certFile, keyFile, _ = authority.Issue(t, "gateway", x509.ExtKeyUsageServerAuth)
	return certFile, keyFile, authority.Pool
}

func TestMCPGatewayServesTLSWhenTheServerDoes(t *testing.T) {
	t.Parallel()
	cert, key, pool := selfSigned(t)
	g := startGateway(t, fmt.Sprintf(`{"debug": true, "builtins": false, "skills": [], "server": {"tls": {"cert": %q, "key": %q}}}`, cert, key))
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	defer hc.CloseIdleConnections()
	url := "https://" + g.srv.MCPAddr().String() + server.MCPPath
	c := mcp.NewClient(&mcp.Implementation{Name: "tls", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("MCP over TLS: %v", err)
	}
	defer cs.Close()
	if res := callMCP(t, cs, "debug_echo", map[string]any{"message": "sealed"}); res.IsError || !strings.Contains(text(t, res), "sealed") {
		t.Fatalf("call over TLS: %q", text(t, res))
	}
	if _, err := g.connect(t, "", nil); err == nil {
		t.Fatal("plaintext HTTP reached a TLS gateway")
	}
}

// The end-to-end test: the official TypeScript SDK client
// (@modelcontextprotocol/sdk, installed in e2e/node) lists and calls.
func TestMCPGatewayWithTheTypeScriptClient(t *testing.T) {
	node, nodeDir := nodeE2E(t)
	const token = "ts-client-secret-42"
	t.Setenv("TN_MCP_TS", token)
	g := startGateway(t, `{"debug": true, "builtins": false, "skills": [], "auth": {"tokens": [
		{"name": "ts", "token": "${TN_MCP_TS}", "tools": ["debug_*"]}]}}`, echoTool("hidden"))

	run := func(tok string) (map[string]any, string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "mcp-client.mjs"), nodeDir, g.url, "debug_echo", `{"message":"from typescript"}`)
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

// benchCall is debug_echo's arguments in both benchmarks.
const benchCall = `{"message":"hello"}`

// BenchmarkGatewayMCPCall is one tools/call of debug_echo through /mcp
// (go-sdk client, streamable HTTP over loopback TCP, one shared session).
// Compare with BenchmarkGatewayGRPCCall: same tool, same executor.
func BenchmarkGatewayMCPCall(b *testing.B) {
	g := startGateway(b, debugOnly)
	cs := g.mustConnect(b, "", nil)
	params := &mcp.CallToolParams{Name: "debug_echo", Arguments: json.RawMessage(benchCall)}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			res, err := cs.CallTool(context.Background(), params)
			if err != nil || res.IsError {
				b.Fatalf("tools/call: %v %v", err, res)
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}

// BenchmarkGatewayGRPCCall is one Execute of debug_echo over gRPC on the
// same server as BenchmarkGatewayMCPCall.
func BenchmarkGatewayGRPCCall(b *testing.B) {
	g := startGateway(b, debugOnly)
	req := &pb.ExecuteRequest{Name: "debug_echo", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: benchCall}}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(p *testing.PB) {
		for p.Next() {
			resp, err := g.grpc.Execute(context.Background(), req)
			if err != nil || resp.GetResult().GetIsError() {
				b.Fatalf("Execute: %v %v", err, resp)
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}

// Serve your registry to MCP clients: set server.mcp.listen (or
// Options.MCPListen) and point any MCP client at http://ADDR/mcp.
func Example_mcpGateway() {
	dir, err := os.MkdirTemp("", "toolnexus-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	cfg := filepath.Join(dir, "toolnexus.json")
	if err := os.WriteFile(cfg, []byte(`{"builtins": false, "skills": [],
		"server": {"listen": "127.0.0.1:0", "metricsListen": "", "mcp": {"listen": "127.0.0.1:0"}}}`), 0o600); err != nil {
		panic(err)
	}
	greet := tool.Must(tool.Native("greet", func(_ context.Context, args map[string]any) (any, error) {
		return fmt.Sprintf("hello, %v", args["name"]), nil
	}, tool.WithDescription("Greet someone by name.")))

	srv, err := server.New(server.Options{ConfigPath: cfg, Native: []tool.Tool{greet},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		panic(err)
	}
	if err := srv.Listen(); err != nil {
		panic(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	defer func() { stop(); <-served }()

	client := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1"}, nil)
	session, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: "http://" + srv.MCPAddr().String() + "/mcp"}, nil)
	if err != nil {
		panic(err)
	}
	defer session.Close()
	for t, err := range session.Tools(context.Background(), nil) {
		if err != nil {
			panic(err)
		}
		fmt.Printf("%s: %s (source %v)\n", t.Name, t.Description, t.Meta["toolnexus/source"])
	}
	res, err := session.CallTool(context.Background(), &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{"name": "gopher"}})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text, res.IsError, res.Meta["toolnexus/outcome"])
	// Output:
	// greet: Greet someone by name. (source custom)
	// hello, gopher false ok
}

// BenchmarkGatewayBareSDKCall is the baseline for BenchmarkGatewayMCPCall:
// the same client calling an echo tool on a bare go-sdk streamable-HTTP
// server, so the difference is what the gateway adds (auth check, executor,
// metrics, result conversion).
func BenchmarkGatewayBareSDKCall(b *testing.B) {
	s := mcp.NewServer(&mcp.Implementation{Name: "bare", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "debug_echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	defer ts.Close()
	defer ts.CloseClientConnections()
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: ts.URL, MaxRetries: -1}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "debug_echo", Arguments: json.RawMessage(benchCall)}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if res, err := cs.CallTool(context.Background(), params); err != nil || res.IsError {
				b.Fatalf("tools/call: %v %v", err, res)
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
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
	g := startGateway(t, `{"builtins": false, "skills": []}`, wait, echoTool("after"))
	cs := g.mustConnect(t, "", nil)
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
	if res := callMCP(t, cs, "after", map[string]any{"ok": true}); res.IsError {
		t.Fatalf("call after a cancelled one: %q", text(t, res))
	}
}

func TestMCPGatewayReloadedTokenAppliesToOpenSessions(t *testing.T) {
	const secret = "reloaded-token-secret-1"
	t.Setenv("TN_MCP_RELOAD", secret)
	cfg := func(pattern string) string {
		return `{"debug": true, "builtins": false, "skills": [], "auth": {"tokens": [{"name": "a", "token": "${TN_MCP_RELOAD}", "tools": ["` + pattern + `"]}]}}`
	}
	g := startGateway(t, cfg("debug_echo"))
	cs := g.mustConnect(t, secret, nil)
	if got := strings.Join(mcpNames(listMCP(t, cs)), ","); got != "debug_echo" {
		t.Fatalf("before reload: %s", got)
	}
	if err := os.WriteFile(g.cfgPath, []byte(cfg("debug_f*")), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := g.srv.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(mcpNames(listMCP(t, cs)), ","); got != "debug_fail" {
		t.Fatalf("after reload the same session lists %s, want debug_fail", got)
	}
	mustBeUnknownMCP(t, cs, "debug_echo") // the reloaded token no longer allows it
}

// TestMainServesMCPWithTheFlag runs server.Main in a child process (this
// test binary again) with --mcp-listen, so the flag and its wiring are
// what is tested; SIGTERM then ends it with exit 0.
func TestMainServesMCPWithTheFlag(t *testing.T) {
	t.Parallel()
	if args := os.Getenv("TN_MCP_MAIN_ARGS"); args != "" {
		os.Exit(server.Main(strings.Fields(args)))
	}
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "toolnexus.json")
	if err := os.WriteFile(cfgPath, []byte(debugOnly), 0o600); err != nil {
		t.Fatal(err)
	}
	start := func(env ...string) (*exec.Cmd, *bytes.Buffer, <-chan string) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMainServesMCPWithTheFlag$")
		cmd.Env = append(os.Environ(), env...)
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		addr := make(chan string, 1)
		var all bytes.Buffer
		go func() {
			sc := bufio.NewScanner(stderr)
			found := false
			for sc.Scan() {
				all.WriteString(sc.Text() + "\n")
				if i := strings.Index(sc.Text(), " mcp="); i >= 0 && !found {
					found = true
					addr <- strings.Fields(sc.Text()[i+5:])[0]
				}
			}
			close(addr)
		}()
		return cmd, &all, addr
	}

	cmd, _, addrc := start("TN_MCP_MAIN_ARGS=--config " + cfgPath + " --listen 127.0.0.1:0 --metrics-listen off --mcp-listen 127.0.0.1:0")
	var addr string
	select {
	case addr = <-addrc:
	case <-time.After(30 * time.Second): // a guard against a wedged child only
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatal("the server did not log its MCP address")
	}
	if addr == "" || addr == "disabled" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("MCP address %q", addr)
	}
	g := &gw{url: "http://" + addr + server.MCPPath}
	cs := g.mustConnect(t, "", nil)
	if n := len(listMCP(t, cs)); n != 4 {
		t.Errorf("the served binary lists %d tools over MCP, want the 4 debug tools", n)
	}
	cs.Close()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGINT: %v, want 0", err)
	}

	// The environment variable does the same, and a non-loopback address
	// without auth is a config error (exit 2) naming the key.
	cmd, out, addrc := start("TN_MCP_MAIN_ARGS=--config "+cfgPath+" --listen 127.0.0.1:0 --metrics-listen off", "TOOLNEXUS_MCP_LISTEN=0.0.0.0:0")
	for range addrc {
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != server.ExitConfig || !strings.Contains(out.String(), "server.mcp.listen") {
		t.Fatalf("TOOLNEXUS_MCP_LISTEN=0.0.0.0:0 without auth: %v, stderr:\n%s", err, out.String())
	}
}

func TestMCPGatewaySchemaGetsTheObjectTypeMCPRequires(t *testing.T) {
	t.Parallel()
	lax := tool.Must(tool.New("lax", func(context.Context, tool.Call) tool.Result { return tool.Success("ok", nil) },
		tool.WithInputSchema(json.RawMessage(`{"properties":{"a":{"type":"string"}},"required":["a"]}`))))
	strict := tool.Must(tool.New("strict", func(context.Context, tool.Call) tool.Result { return tool.Success("ok", nil) },
		tool.WithInputSchema(json.RawMessage(`{"type":"object","properties":{"b":{"type":"integer","minimum":1}},"additionalProperties":false}`))))
	g := startGateway(t, `{"builtins": false, "skills": []}`, lax, strict)
	cs := g.mustConnect(t, "", nil)
	got := map[string][]byte{}
	for _, tl := range listMCP(t, cs) {
		got[tl.Name], _ = json.Marshal(tl.InputSchema)
	}
	if !jsonEqual(t, got["lax"], []byte(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`)) {
		t.Errorf("lax schema over MCP: %s", got["lax"])
	}
	if !jsonEqual(t, got["strict"], []byte(`{"type":"object","properties":{"b":{"type":"integer","minimum":1}},"additionalProperties":false}`)) {
		t.Errorf("an object schema must pass unchanged: %s", got["strict"])
	}
}

// syncWriter is a goroutine-safe log sink.
type syncWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func TestMCPGatewayLogsSessionsAtDebugAndNeverATokenValue(t *testing.T) {
	const secret = "log-check-secret-99"
	t.Setenv("TN_MCP_LOG", secret)
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		var logs syncWriter
		g := startGatewayLogging(t, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: level})),
			`{"debug": true, "builtins": false, "skills": [], "auth": {"tokens": [{"name": "logged", "token": "${TN_MCP_LOG}"}]}}`)
		cs := g.mustConnect(t, secret, nil)
		callMCP(t, cs, "debug_echo", map[string]any{"message": "m"})
		_, _ = g.connect(t, "wrong-"+secret, nil)
		cs.Close()
		g.stop()
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
	url, up := upstreamServer(t)
	g := startGateway(t, fmt.Sprintf(`{"builtins": false, "skills": [], "mcpServers": {"up": {"url": %q}}}`, url+"/mcp"))
	opts, changed := listChanged()
	cs := g.mustConnect(t, "", opts)
	if got := strings.Join(mcpNames(listMCP(t, cs)), ","); got != "up_greet" {
		t.Fatalf("initial list %s", got)
	}
	up.AddTool(&mcp.Tool{Name: "wave", Description: "Wave.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "👋"}}}, nil
		})
	awaitTools(t, cs, changed, "an upstream server added a tool", "up_greet", "up_wave")
	if res := callMCP(t, cs, "up_wave", nil); res.IsError || text(t, res) != "👋" {
		t.Fatalf("the new upstream tool through the gateway: %v %q", res.IsError, text(t, res))
	}
}
