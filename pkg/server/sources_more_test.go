package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/types/known/structpb"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
)

func TestQuestionSuspendsAndResumesOverGRPC(t *testing.T) {
	t.Parallel()
	f := start(t, `{"builtins": true}`)
	args := `{"questions":[{"question":"Pick a color?","header":"Color","options":["red","green"]},{"question":"Confirm?"}]}`
	res := f.exec(t, "question", args)
	if !res.GetIsError() || res.GetOutcome() != pb.Outcome_OUTCOME_PENDING {
		t.Fatalf("question did not suspend: %v", res)
	}
	p := res.GetPending()
	if p.GetKind() != "question" || p.GetPrompt() != "Pick a color? (options: red, green)\nConfirm?" || p.GetId() == "" {
		t.Fatalf("pending = %v", p)
	}
	if qs := p.GetData().AsMap()["questions"].([]any); len(qs) != 2 {
		t.Fatalf("pending data %v", p.GetData())
	}
	answer, err := structpb.NewValue(map[string]any{"answers": []any{"red"}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := f.reg.Execute(context.Background(), &pb.ExecuteRequest{Name: "question",
		Input:  &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: args},
		Answer: &pb.Answer{Id: p.GetId(), Ok: true, Data: answer}})
	if err != nil {
		t.Fatal(err)
	}
	if r := resp.GetResult(); r.GetIsError() || r.GetOutcome() != pb.Outcome_OUTCOME_OK || r.GetOutput() != `{"answers":["red"]}` {
		t.Fatalf("resumed: %v", r)
	}
	if line := metricLine(f.scrape(t), "toolnexus_tool_calls_total", `tool="question"`, `outcome="pending"`); !strings.HasSuffix(line, " 1") {
		t.Errorf("pending not counted: %q", line)
	}
}

// a2aAgent is a minimal protocol-1.0 JSON-RPC agent: every task completes
// on the first poll, or at once (in SendMessage's answer) when atOnce is
// set. seen, when not nil, is shown each JSON-RPC request first. The
// source tests and the tracing test share it, so both talk to the same
// agent.
func a2aAgent(t *testing.T, atOnce bool, seen func(*http.Request)) *httptest.Server {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			fmt.Fprintf(w, `{"name":"Review Bot","description":"Reviews things","version":"1.0.0",
				"supportedInterfaces":[{"url":%q,"protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
				"skills":[{"id":"review","name":"Review","description":"Review a text"}]}`, srv.URL+"/rpc")
			return
		}
		if seen != nil {
			seen(r)
		}
		var req struct {
			ID     any             `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		task := map[string]any{"id": "task-1", "status": map[string]any{"state": "TASK_STATE_WORKING"}}
		if atOnce || req.Method == "GetTask" {
			task = map[string]any{"id": "task-1", "status": map[string]any{"state": "TASK_STATE_COMPLETED"},
				"artifacts": []any{map[string]any{"parts": []any{map[string]any{"text": "looks good"}}}}}
		}
		result := any(task)
		if req.Method == "SendMessage" {
			result = map[string]any{"task": task}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestA2AAndHTTPSourcesOverGRPC(t *testing.T) {
	t.Parallel()
	agent := a2aAgent(t, false, nil)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "pong") }))
	defer api.Close()
	cfg := fmt.Sprintf(`{"builtins": false, "agents": {"reviewer": {"card": %q, "pollEvery": 1}},
		"http": [{"name": "ping", "url": %q}]}`, agent.URL+"/card", api.URL)
	f := start(t, cfg)

	list, err := f.reg.ListTools(context.Background(), &pb.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tl := range list.GetTools() {
		got[tl.GetName()] = tl.GetSource()
	}
	if got["Review_Bot_review"] != "a2a" || got["ping"] != "http" {
		t.Fatalf("tools %v; want Review_Bot_review (a2a) and ping (http)", got)
	}
	res := f.exec(t, "Review_Bot_review", `{"task":"review this"}`)
	if res.GetIsError() || res.GetOutput() != "looks good" {
		t.Fatalf("a2a call: %v", res)
	}
	if md := res.GetMetadata().AsMap(); md["agent"] == nil || md["taskId"] != "task-1" || md["state"] != "completed" {
		t.Errorf("a2a metadata %v", md)
	}
	if res := f.exec(t, "ping", `{}`); res.GetIsError() || res.GetOutput() != "pong" {
		t.Fatalf("http call: %v", res)
	}
	body := f.scrape(t)
	for _, src := range []string{"a2a", "http"} {
		if line := metricLine(body, "toolnexus_tool_calls_total", `source="`+src+`"`, `outcome="ok"`); !strings.HasSuffix(line, " 1") {
			t.Errorf("toolnexus_tool_calls_total{source=%q,outcome=ok} = %q", src, line)
		}
	}
	if line := metricLine(body, "toolnexus_source_up", `source="a2a"`, `name="reviewer"`); !strings.HasSuffix(line, " 1") {
		t.Errorf("source_up{a2a,reviewer} = %q", line)
	}
}

// mcpHTTPServer serves a go-sdk MCP server with an `add` tool over
// streamable HTTP on loopback.
func mcpHTTPServer(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "calc", Version: "1.0.0"}, nil)
	type addArgs struct {
		A float64 `json:"a"`
		B float64 `json:"b"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Add two numbers"}, func(_ context.Context, _ *mcp.CallToolRequest, a addArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(a.A + a.B)}}}, nil, nil
	})
	return testutil.ServeMCP(t, s)
}

func TestMCPServerOverGRPC(t *testing.T) {
	t.Parallel()
	url := mcpHTTPServer(t)
	f := start(t, fmt.Sprintf(`{"builtins": false, "mcpServers": {"calc": {"url": %q}, "broken": {"command": ["/nonexistent/mcp-server"]}}}`, url))
	tl, err := f.reg.GetTool(context.Background(), &pb.GetToolRequest{Name: "calc_add"})
	if err != nil || tl.GetTool().GetSource() != "mcp" || tl.GetTool().GetDescription() != "Add two numbers" {
		t.Fatalf("calc_add: %v %v", tl, err)
	}
	res := f.exec(t, "calc_add", `{"a": 2, "b": 40}`)
	if res.GetIsError() {
		t.Fatalf("calc_add: %v", res)
	}
	var sum map[string]any
	if err := json.Unmarshal([]byte(res.GetOutput()), &sum); err == nil {
		t.Logf("structured result %v", sum)
	} else if res.GetOutput() != "42" {
		t.Fatalf("calc_add output %q", res.GetOutput())
	}
	if res.GetMetadata().AsMap()["server"] != "calc" {
		t.Errorf("metadata %v", res.GetMetadata())
	}
	srcs, err := f.src.ListSources(context.Background(), &pb.ListSourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]*pb.Source{}
	for _, s := range srcs.GetSources() {
		states[s.GetKind()+"/"+s.GetName()] = s
	}
	if s := states["mcp/calc"]; s.GetStatus() != "connected" || s.GetToolCount() != 1 {
		t.Errorf("mcp/calc = %v", s)
	}
	if s := states["mcp/broken"]; s.GetStatus() != "failed" && s.GetStatus() != "restarting" || s.GetError() == "" {
		t.Errorf("mcp/broken = %v; want failed with its error", s)
	}
	body := f.scrape(t)
	if line := metricLine(body, "toolnexus_source_up", `source="mcp"`, `name="broken"`); !strings.HasSuffix(line, " 0") {
		t.Errorf("source_up{broken} = %q", line)
	}
	if line := metricLine(body, "toolnexus_source_up", `source="mcp"`, `name="calc"`); !strings.HasSuffix(line, " 1") {
		t.Errorf("source_up{calc} = %q", line)
	}
}

// everythingServer finds the real npm @modelcontextprotocol/server-everything
// installed by `make e2e-deps`.
func everythingServer(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	entry := filepath.Join(filepath.Dir(file), "..", "..", "e2e", "node", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	_, statErr := os.Stat(entry)
	_, nodeErr := exec.LookPath("node")
	if statErr != nil || nodeErr != nil {
		if os.Getenv("TOOLNEXUS_REQUIRE_E2E") == "1" {
			t.Fatalf("server-everything not installed (run make e2e-deps): %v %v", statErr, nodeErr)
		}
		t.Skip("npm peers not installed; run `make e2e-deps` (CI sets TOOLNEXUS_REQUIRE_E2E=1)")
	}
	return entry
}

func TestServerEverythingOverGRPC(t *testing.T) {
	t.Parallel()
	entry := everythingServer(t)
	f := start(t, fmt.Sprintf(`{"builtins": false, "mcpServers": {"everything": {"command": "node", "args": [%q, "stdio"], "timeout": 60000}}}`, entry))
	list, err := f.reg.ListTools(context.Background(), &pb.ListToolsRequest{Sources: []string{"mcp"}})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range list.GetTools() {
		names[tl.GetName()] = true
	}
	if !names["everything_echo"] || !names["everything_get-sum"] {
		t.Fatalf("tools %v; want everything_echo and everything_get-sum", names)
	}
	res := f.exec(t, "everything_echo", `{"message":"hello from gRPC"}`)
	if res.GetIsError() || !strings.Contains(res.GetOutput(), "hello from gRPC") {
		t.Fatalf("echo: %v", res)
	}
	res = f.exec(t, "everything_get-sum", `{"a": 2, "b": 40}`)
	if res.GetIsError() || !strings.Contains(res.GetOutput(), "42") {
		t.Fatalf("get-sum: %v", res)
	}
	// A schema mismatch is caught before the call reaches the server.
	res = f.exec(t, "everything_get-sum", `{"a": "two"}`)
	if !res.GetIsError() || res.GetOutcome() != pb.Outcome_OUTCOME_INVALID_ARGUMENTS {
		t.Fatalf("bad args: %v", res)
	}
}
