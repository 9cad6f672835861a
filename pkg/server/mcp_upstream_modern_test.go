package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/types/known/structpb"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

// modernUpstream is a go-sdk server that speaks 2026-07-28 (its stateless
// handler) with a tool that asks for confirmation mid-call the new way:
// an input_required result, then the retry with the answer.
func modernUpstream(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "modern-upstream", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "confirm", Description: "Ask before acting."}, func(_ context.Context, req *mcp.CallToolRequest, _ map[string]any) (*mcp.CallToolResult, any, error) {
		if resp, ok := req.Params.InputResponses["confirm"].(*mcp.ElicitResult); ok && req.Params.RequestState == "state-1" {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "acted: " + resp.Action + " " + resp.Content["reason"].(string)}}}, nil, nil
		}
		return &mcp.CallToolResult{RequestState: "state-1", InputRequests: mcp.InputRequestMap{"confirm": &mcp.ElicitParams{Message: "Proceed?",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"reason": map[string]any{"type": "string"}}}}}}, nil, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts.URL
}

// TestUpstreamAtModernProtocolAsksMidCall: an upstream on 2026-07-28 whose
// tool answers input_required becomes PENDING (kind elicitation) over gRPC;
// the caller's answer reaches the upstream's retry and the result comes
// back. The SDK's automatic multi round-trip is off: toolnexus retries the
// upstream call itself when the answer comes, so the suspended call holds
// no goroutine (pkg/sources/mcp's TestModernUpstreamSuspendsWithoutGoroutines
// asserts it over 200 calls; the count logged here includes the first
// connection's own goroutines).
func TestUpstreamAtModernProtocolAsksMidCall(t *testing.T) {
	t.Parallel()
	f := start(t, `{"builtins": false, "skills": [], "mcpServers": {"up": {"url": "`+modernUpstream(t)+`"}}}`)
	before := runtime.NumGoroutine()
	res := f.exec(t, "up_confirm", `{}`)
	p := res.GetPending()
	if res.GetOutcome() != pb.Outcome_OUTCOME_PENDING || p.GetKind() != "elicitation" || p.GetPrompt() != "Proceed?" {
		t.Fatalf("want PENDING elicitation, got %v", res)
	}
	t.Logf("goroutines while one call waits: +%d", runtime.NumGoroutine()-before)
	data, _ := structpb.NewValue(map[string]any{"reason": "tested"})
	resp, err := f.reg.Execute(context.Background(), &pb.ExecuteRequest{Name: "up_confirm", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{}`},
		Answer: &pb.Answer{Id: p.GetId(), Ok: true, Data: data}})
	if err != nil {
		t.Fatal(err)
	}
	if r := resp.GetResult(); r.GetIsError() || !strings.Contains(r.GetOutput(), "acted: accept tested") {
		t.Fatalf("resumed: %v", r)
	}
}
