package core_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/inproc"
	"github.com/toolnexus/toolnexus/internal/testutil/mcpclient"
)

// Over /mcp the same policies hold: a forbidden bash pattern is an isError
// result naming the policy, a write that needs approval waits (with a
// progress notification naming the approval) and runs once approved, and
// a principal over its rate gets JSON-RPC error -32029 with the delay.
func TestPolicyOverMCP(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pol := testutil.WriteWirePolicies(t, dir)
	g := inproc.Serve(t, fmt.Sprintf(`{"skills": [],
		"auth": {"tokens": [{"name": "agent-a", "token": %q}, {"name": "agent-b", "token": %q}, {"name": "ops", "token": %q, "admin": true}]},
		"policy": {"files": [%q]},
		"limits": {"principals": {"agent-b": {"callsPerSecond": 0.01, "burst": 1}}}}`, testutil.PolAgentA, testutil.PolAgentB, testutil.PolOps, pol))

	progress := make(chan string, 8)
	cs := g.MustConnect(t, testutil.PolAgentA, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		progress <- r.Params.Message
	}})
	if res := mcpclient.Call(t, cs, "bash", map[string]any{"command": "rm -rf /"}); !res.IsError || !strings.Contains(mcpclient.Text(t, res), "denied by policy no-rm-rf") {
		t.Fatalf("forbidden bash over /mcp: %v", mcpclient.Text(t, res))
	}

	params := &mcp.CallToolParams{Name: "write", Arguments: map[string]any{"path": "mcp.txt", "content": "m"}}
	params.SetProgressToken("wait-1")
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), params)
		if err != nil {
			t.Errorf("tools/call: %v", err)
		}
		done <- res
	}()
	id, ok := strings.CutPrefix(<-progress, "waiting for approval ")
	if !ok {
		t.Fatal("no progress naming the approval")
	}
	if _, err := g.Approvals.Approve(inproc.Bearer(testutil.PolOps), &pb.ApproveRequest{Id: id}); err != nil {
		t.Fatal(err)
	}
	if res := <-done; res == nil || res.IsError {
		t.Fatalf("the approved call: %v", res)
	}
	// The write ran in agent-a's MCP session's workspace.
	if res := mcpclient.Call(t, cs, "read", map[string]any{"path": "mcp.txt"}); res.IsError || !strings.Contains(mcpclient.Text(t, res), "m") {
		t.Fatalf("read back: %v", mcpclient.Text(t, res))
	}

	csB := g.MustConnect(t, testutil.PolAgentB, nil)
	mcpclient.Call(t, csB, "read", map[string]any{"path": "mcp.txt"}) // admitted: a result, not a protocol error
	_, err := csB.CallTool(context.Background(), &mcp.CallToolParams{Name: "read", Arguments: map[string]any{"path": "mcp.txt"}})
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != -32029 {
		t.Fatalf("over the rate: %v", err)
	}
	var data struct {
		RetryAfterMs int64  `json:"retryAfterMs"`
		Limit        string `json:"limit"`
	}
	if err := json.Unmarshal(je.Data, &data); err != nil || data.RetryAfterMs < 90_000 || data.Limit != "limits.principals.agent-b.callsPerSecond" {
		t.Fatalf("error data %s: %v", je.Data, err)
	}
}

// TestHiddenToolRateLimitUntouchedOverMCP is TestHiddenToolRateLimitUntouched
// on /mcp: a token allowed only write calls read, whose shared bucket holds
// one token; it is told the tool is unknown (never -32029 naming
// limits.tools.read), and the next caller allowed read is served.
func TestHiddenToolRateLimitUntouchedOverMCP(t *testing.T) {
	t.Parallel()
	const reader, runner = "mcp-reader-token-0a1b2c", "mcp-runner-token-3d4e5f"
	g := inproc.Serve(t, fmt.Sprintf(`{"skills": [], "auth": {"tokens": [
		{"name": "reader", "token": %q, "tools": ["write"]}, {"name": "runner", "token": %q}]},
		"limits": {"tools": {"read": {"callsPerSecond": 0.01, "burst": 1}}}}`, reader, runner))
	csR := g.MustConnect(t, reader, nil)
	for i := range 3 {
		_, err := csR.CallTool(context.Background(), &mcp.CallToolParams{Name: "read", Arguments: map[string]any{"path": "x"}})
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code == -32029 || strings.Contains(je.Message, "limits.tools") || !strings.Contains(je.Message, "unknown tool") {
			t.Fatalf("hidden call %d: %v; want unknown tool, no limit named", i, err)
		}
	}
	csOK := g.MustConnect(t, runner, nil)
	if _, err := csOK.CallTool(context.Background(), &mcp.CallToolParams{Name: "read", Arguments: map[string]any{"path": "x"}}); err != nil {
		t.Fatalf("the allowed caller found read's bucket drained: %v", err)
	}
}
