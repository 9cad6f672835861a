package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/server"
)

// traceparents records the traceparent every peer was sent, by peer.
type traceparents struct {
	mu   sync.Mutex
	seen map[string][]string
}

func (tp *traceparents) add(peer, v string) {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	if tp.seen == nil {
		tp.seen = map[string][]string{}
	}
	tp.seen[peer] = append(tp.seen[peer], v)
}

func (tp *traceparents) get(peer string) []string {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return append([]string(nil), tp.seen[peer]...)
}

// tracedMCPServer is a go-sdk MCP server over streamable HTTP whose `whoami`
// tool records the _meta.traceparent of its call ("mcp-meta") and the
// traceparent header of the POST that carried it ("mcp-header").
func tracedMCPServer(t *testing.T, rec *traceparents) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "peer", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "whoami", Description: "Says hello"}, func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		tp, _ := req.Params.Meta["traceparent"].(string)
		rec.add("mcp-meta", tp)
		if req.Extra != nil {
			rec.add("mcp-header", req.Extra.Header.Get("traceparent"))
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "peer"}}}, nil, nil
	})
	return testutil.ServeMCP(t, s)
}

// tracedA2AAgent is an A2A 1.0 agent that completes every task at once
// and records the traceparent of each JSON-RPC request ("a2a").
func tracedA2AAgent(t *testing.T, rec *traceparents) string {
	t.Helper()
	return a2aAgent(t, true, func(r *http.Request) { rec.add("a2a", r.Header.Get("traceparent")) }).URL
}

// traceparent parts: version-traceid-parentid-flags.
func parseTraceparent(t *testing.T, v string) (traceID, parentID string) {
	t.Helper()
	p := strings.Split(v, "-")
	if len(p) != 4 || p[0] != "00" || len(p[1]) != 32 || len(p[2]) != 16 {
		t.Fatalf("traceparent %q is not W3C", v)
	}
	return p[1], p[2]
}

type tracedSetup struct {
	receiver *testutil.OTLPReceiver
	peers    *traceparents
	srv      *server.Server
	stop     func()
	audit    string
}

// tracedServer serves an MCP server, an HTTP tool and an A2A agent with
// tracing on (exporting to a real OTLP receiver) and the MCP gateway.
func tracedServer(t *testing.T) *tracedSetup {
	t.Helper()
	ts := &tracedSetup{receiver: testutil.StartOTLPReceiver(t), peers: &traceparents{}}
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts.peers.add("http", r.Header.Get("traceparent"))
		fmt.Fprint(w, "pong")
	}))
	t.Cleanup(api.Close)
	ts.audit = t.TempDir() + "/audit.log"
	cfg := fmt.Sprintf(`{"builtins": false,
		"mcpServers": {"peer": {"url": %q}},
		"http": [{"name": "ping", "url": %q}],
		"agents": {"reviewer": {"card": %q, "pollEvery": 1}},
		"telemetry": {"endpoint": %q, "protocol": "grpc", "serviceName": "toolnexus-test"},
		"audit": {"path": %q}}`,
		tracedMCPServer(t, ts.peers), api.URL, tracedA2AAgent(t, ts.peers)+"/card", ts.receiver.Endpoint, ts.audit)
	ts.srv, _, ts.stop = launch(t, cfg, func(o *server.Options) { o.MCPListen = "127.0.0.1:0" })
	return ts
}

// spansOf indexes spans by id and checks they are all in one trace.
func oneTrace(t *testing.T, spans []testutil.Span, traceID string) map[string]testutil.Span {
	t.Helper()
	byID := map[string]testutil.Span{}
	for _, s := range spans {
		if s.TraceID != traceID {
			continue
		}
		byID[s.SpanID] = s
	}
	return byID
}

func findSpan(t *testing.T, spans map[string]testutil.Span, name string) testutil.Span {
	t.Helper()
	var found []testutil.Span
	for _, s := range spans {
		if s.Name == name {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		names := []string{}
		for _, s := range spans {
			names = append(names, s.Name)
		}
		t.Fatalf("want one span %q in the trace, found %d among %v", name, len(found), names)
	}
	return found[0]
}

func checkToolSpan(t *testing.T, s testutil.Span, tool, source string) {
	t.Helper()
	want := map[string]string{
		"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool,
		"toolnexus.source": source, "toolnexus.outcome": "ok",
	}
	for k, v := range want {
		if s.Attributes[k] != v {
			t.Errorf("span %q: %s = %q, want %q (all: %v)", s.Name, k, s.Attributes[k], v, s.Attributes)
		}
	}
	if s.ServiceName != "toolnexus-test" {
		t.Errorf("span %q: service.name %q", s.Name, s.ServiceName)
	}
}

// One agent request — its own span, sent as traceparent metadata — runs an
// MCP tool, an HTTP tool and an A2A agent over gRPC: the OTLP receiver gets
// one trace in which the gRPC server span hangs under the agent's span,
// each execute_tool span under the server span, and every peer was handed a
// traceparent whose parent is our span for that call.
func TestTraceFromAgentThroughGRPCToEverySource(t *testing.T) {
	t.Parallel()
	ts := tracedServer(t)
	const traceID, agentSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	conn, err := grpc.NewClient(ts.srv.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	reg := pb.NewRegistryServiceClient(conn)
	ctx := metadata.AppendToOutgoingContext(context.Background(), "traceparent", "00-"+traceID+"-"+agentSpan+"-01")
	args := map[string]string{"peer_whoami": `{}`, "ping": `{}`, "Review_Bot_review": `{"task":"review this"}`}
	for _, c := range []struct{ name, callID string }{{"peer_whoami", "call-1"}, {"ping", ""}, {"Review_Bot_review", "call-3"}} {
		resp, err := reg.Execute(ctx, &pb.ExecuteRequest{Name: c.name, CallId: c.callID, Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: args[c.name]}})
		if err != nil || resp.GetResult().GetIsError() {
			t.Fatalf("Execute %s: %v %v", c.name, err, resp.GetResult())
		}
	}
	// The duration histogram carries the trace as an exemplar (OpenMetrics).
	ct, body := (&fixture{srv: ts.srv}).scrapeAs(t, "application/openmetrics-text; version=1.0.0")
	if !strings.HasPrefix(ct, "application/openmetrics-text") {
		t.Fatalf("Content-Type %q", ct)
	}
	var exemplar bool
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, "toolnexus_tool_call_duration_seconds_bucket{") && strings.Contains(line, `# {trace_id="`+traceID+`"}`) {
			exemplar = true
		}
	}
	if !exemplar {
		t.Error("no toolnexus_tool_call_duration_seconds bucket has the call's trace_id as exemplar")
	}
	ts.stop() // flushes the spans

	spans := oneTrace(t, ts.receiver.Spans(), traceID)
	var servers []testutil.Span
	for _, s := range spans {
		if s.Name == "toolnexus.v1.RegistryService/Execute" {
			servers = append(servers, s)
			if s.ParentSpanID != agentSpan {
				t.Errorf("gRPC server span's parent = %s, want the agent's span %s", s.ParentSpanID, agentSpan)
			}
		}
	}
	if len(servers) != 3 {
		t.Fatalf("%d gRPC server spans in the trace, want 3", len(servers))
	}
	isServer := func(id string) bool {
		for _, s := range servers {
			if s.SpanID == id {
				return true
			}
		}
		return false
	}

	mcpSpan := findSpan(t, spans, "execute_tool peer_whoami")
	httpSpan := findSpan(t, spans, "execute_tool ping")
	a2aSpan := findSpan(t, spans, "execute_tool Review_Bot_review")
	for _, s := range []testutil.Span{mcpSpan, httpSpan, a2aSpan} {
		if !isServer(s.ParentSpanID) {
			t.Errorf("span %q's parent %s is not a gRPC server span", s.Name, s.ParentSpanID)
		}
	}
	checkToolSpan(t, mcpSpan, "peer_whoami", "mcp")
	checkToolSpan(t, httpSpan, "ping", "http")
	checkToolSpan(t, a2aSpan, "Review_Bot_review", "a2a")
	if mcpSpan.Attributes["gen_ai.tool.call.id"] != "call-1" || a2aSpan.Attributes["gen_ai.tool.call.id"] != "call-3" {
		t.Errorf("gen_ai.tool.call.id: mcp %q, a2a %q", mcpSpan.Attributes["gen_ai.tool.call.id"], a2aSpan.Attributes["gen_ai.tool.call.id"])
	}
	if _, ok := httpSpan.Attributes["gen_ai.tool.call.id"]; ok {
		t.Error("gen_ai.tool.call.id set on a call that sent none")
	}

	// The audit lines name the trace and the execute_tool span.
	lines := testutil.JSONLines(t, ts.audit)
	if len(lines) != 3 {
		t.Fatalf("%d audit lines, want 3", len(lines))
	}
	for i, s := range []testutil.Span{mcpSpan, httpSpan, a2aSpan} {
		if lines[i]["trace_id"] != traceID || lines[i]["span_id"] != s.SpanID {
			t.Errorf("audit line %d: trace %v span %v, want %s %s", i, lines[i]["trace_id"], lines[i]["span_id"], traceID, s.SpanID)
		}
	}

	// The MCP server: _meta and the HTTP header both name our span.
	for _, peer := range []string{"mcp-meta", "mcp-header"} {
		got := ts.peers.get(peer)
		if len(got) != 1 {
			t.Fatalf("%s: got %v, want one traceparent", peer, got)
		}
		tid, parent := parseTraceparent(t, got[0])
		if tid != traceID || parent != mcpSpan.SpanID {
			t.Errorf("%s traceparent %s: want trace %s, parent %s (execute_tool)", peer, got[0], traceID, mcpSpan.SpanID)
		}
	}
	// HTTP and A2A: the request carries the HTTP client span, a child of
	// execute_tool.
	for peer, parent := range map[string]testutil.Span{"http": httpSpan, "a2a": a2aSpan} {
		got := ts.peers.get(peer)
		if len(got) == 0 {
			t.Fatalf("%s was sent no request", peer)
		}
		for _, v := range got {
			tid, client := parseTraceparent(t, v)
			cs, ok := spans[client]
			if tid != traceID || !ok {
				t.Fatalf("%s traceparent %s: not a span of trace %s", peer, v, traceID)
			}
			if cs.ParentSpanID != parent.SpanID || !strings.HasPrefix(cs.Name, "HTTP ") {
				t.Errorf("%s: the request's span %q has parent %s, want an HTTP client span under %s", peer, cs.Name, cs.ParentSpanID, parent.Name)
			}
		}
	}
}

// The same through /mcp: the trace comes from the tools/call _meta, or,
// without one, from the POST's traceparent header.
func TestTraceFromAgentThroughMCPGateway(t *testing.T) {
	t.Parallel()
	ts := tracedServer(t)
	const metaTrace, metaSpan = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	const hdrTrace, hdrSpan = "5b8efff798038103d269b633813fc60c", "eee19b7ec3c1b174"

	hc := &http.Client{Transport: headerRT{base: http.DefaultTransport, key: "traceparent", value: "00-" + hdrTrace + "-" + hdrSpan + "-01"}}
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: "http://" + ts.srv.MCPAddr().String() + server.MCPPath, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// _meta wins over the header.
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "peer_whoami", Arguments: map[string]any{},
		Meta: mcp.Meta{"traceparent": "00-" + metaTrace + "-" + metaSpan + "-01"}})
	if err != nil || res.IsError {
		t.Fatalf("tools/call peer_whoami: %v %v", err, res)
	}
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "ping", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("tools/call ping: %v %v", err, res)
	}
	_ = cs.Close()
	// A client on the 2026-07-28 protocol (stateless; traceparent in the
	// _meta it sends with every request) continues its trace the same way.
	const modernTrace, modernSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	modern, err := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: "http://" + ts.srv.MCPAddr().String() + server.MCPPath}, &mcp.ClientSessionOptions{ProtocolVersion: modernVersion})
	if err != nil || modern.InitializeResult().ProtocolVersion != modernVersion {
		t.Fatalf("connect at %s: %v", modernVersion, err)
	}
	res, err = modern.CallTool(context.Background(), &mcp.CallToolParams{Name: "ping", Arguments: map[string]any{},
		Meta: mcp.Meta{"traceparent": "00-" + modernTrace + "-" + modernSpan + "-01"}})
	if err != nil || res.IsError {
		t.Fatalf("tools/call ping at %s: %v %v", modernVersion, err, res)
	}
	_ = modern.Close()
	ts.stop()

	all := ts.receiver.Spans()
	if s := findSpan(t, oneTrace(t, all, modernTrace), "execute_tool ping"); s.ParentSpanID != modernSpan {
		t.Errorf("at %s: execute_tool ping's parent %s, want the _meta span %s", modernVersion, s.ParentSpanID, modernSpan)
	}
	mcpSpan := findSpan(t, oneTrace(t, all, metaTrace), "execute_tool peer_whoami")
	if mcpSpan.ParentSpanID != metaSpan {
		t.Errorf("execute_tool peer_whoami's parent %s, want the agent's _meta span %s", mcpSpan.ParentSpanID, metaSpan)
	}
	checkToolSpan(t, mcpSpan, "peer_whoami", "mcp")
	if mcpSpan.Attributes["toolnexus.protocol"] != "mcp" {
		t.Errorf("toolnexus.protocol = %q", mcpSpan.Attributes["toolnexus.protocol"])
	}
	got := ts.peers.get("mcp-meta")
	if len(got) != 1 {
		t.Fatalf("mcp-meta: %v", got)
	}
	if tid, parent := parseTraceparent(t, got[0]); tid != metaTrace || parent != mcpSpan.SpanID {
		t.Errorf("the MCP server got traceparent %s; want trace %s, parent %s", got[0], metaTrace, mcpSpan.SpanID)
	}

	httpSpan := findSpan(t, oneTrace(t, all, hdrTrace), "execute_tool ping")
	if httpSpan.ParentSpanID != hdrSpan {
		t.Errorf("execute_tool ping's parent %s, want the header's span %s", httpSpan.ParentSpanID, hdrSpan)
	}
	checkToolSpan(t, httpSpan, "ping", "http")
	if got := ts.peers.get("http"); len(got) != 2 || !strings.Contains(got[0], hdrTrace) || !strings.Contains(got[1], modernTrace) {
		t.Errorf("the HTTP tool got traceparent %v, want one in trace %s, then one in %s", got, hdrTrace, modernTrace)
	}
}

// headerRT sets one header on every request.
type headerRT struct {
	base       http.RoundTripper
	key, value string
}

func (h headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.key, h.value)
	return h.base.RoundTrip(r)
}
