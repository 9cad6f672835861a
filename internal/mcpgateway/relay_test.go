package mcpgateway_test

//lint:file-ignore SA1019 sampling is deprecated in the newest MCP protocol; these tests relay it on purpose.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/inproc"
	"github.com/toolnexus/toolnexus/internal/testutil/mcpclient"
)

// TestEverythingRelayedThroughMCPGateway: an MCP client of /mcp that
// declares elicitation and sampling answers server-everything's requests
// itself (relayed through toolnexus, the go-sdk client on the newest
// protocol); a client that declares neither has them declined for it.
func TestEverythingRelayedThroughMCPGateway(t *testing.T) {
	t.Parallel()
	entry := testutil.EverythingServer(t)
	g := inproc.Serve(t, fmt.Sprintf(`{"builtins": false, "skills": [], "mcpServers": {"everything": {"command": "node", "args": [%q, "stdio"], "timeout": 60000}}}`, entry))

	var asked []string
	cs := g.MustConnect(t, "", &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = append(asked, req.Params.Message)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Katherine Johnson"}}, nil
		},
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "client-model", Content: &mcp.TextContent{Text: "sampled by the MCP client"}}, nil
		},
	})
	res := mcpclient.Call(t, cs, "everything_trigger-elicitation-request", map[string]any{})
	if res.IsError || !strings.Contains(mcpclient.Text(t, res), "- Name: Katherine Johnson") || len(asked) != 1 || asked[0] != "Please provide inputs for the following fields:" {
		t.Fatalf("elicitation through /mcp: %q (asked %q)", mcpclient.Text(t, res), asked)
	}
	res = mcpclient.Call(t, cs, "everything_trigger-sampling-request", map[string]any{"prompt": "hello"})
	if res.IsError || !strings.Contains(mcpclient.Text(t, res), "sampled by the MCP client") {
		t.Fatalf("sampling through /mcp: %q", mcpclient.Text(t, res))
	}

	plainClient := g.MustConnect(t, "", nil)
	res = mcpclient.Call(t, plainClient, "everything_trigger-elicitation-request", map[string]any{})
	if res.IsError || !strings.Contains(mcpclient.Text(t, res), "User declined") {
		t.Fatalf("a client without elicitation: %q", mcpclient.Text(t, res))
	}
}

// tsAnswers is what mcp-answering-client.mjs printed.
type tsAnswers struct {
	Elicitation, Sampling map[string]any
	Asked                 []string
}

// runTSAnsweringClient runs the official TypeScript SDK client against a
// gateway in front of server-everything, answering as mode says
// (testdata/mcp-answering-client.mjs), with limits as the config's limits.
func runTSAnsweringClient(t *testing.T, limits, mode string, extra ...string) tsAnswers {
	t.Helper()
	entry := testutil.EverythingServer(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH")
	}
	nodeDir, err := filepath.Abs(filepath.Join("..", "..", "e2e", "node"))
	if err != nil {
		t.Fatal(err)
	}
	g := inproc.Serve(t, fmt.Sprintf(`{"builtins": false, "skills": [], "limits": {%s}, "mcpServers": {"everything": {"command": "node", "args": [%q, "stdio"], "timeout": 60000}}}`, limits, entry))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := append([]string{filepath.Join("testdata", "mcp-answering-client.mjs"), nodeDir, g.MCPURL, mode}, extra...)
	cmd := exec.CommandContext(ctx, node, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node client: %v\nstderr:\n%s", err, stderr.String())
	}
	var out tsAnswers
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("stdout %q: %v", stdout.String(), err)
	}
	return out
}

// TestEverythingRelayedToTheTypeScriptClient: the official TypeScript SDK
// client (an older protocol than toolnexus's newest, so the server asks it
// with elicitation/create and sampling/createMessage during the call)
// answers server-everything's requests through /mcp, and its answers come
// back in the results.
func TestEverythingRelayedToTheTypeScriptClient(t *testing.T) {
	t.Parallel()
	out := runTSAnsweringClient(t, "", "answer")
	if e := fmt.Sprint(out.Elicitation["content"]); out.Elicitation["isError"] == true || !strings.Contains(e, "- Name: Dorothy Vaughan") {
		t.Errorf("elicitation result: %v", out.Elicitation)
	}
	if s := fmt.Sprint(out.Sampling["content"]); out.Sampling["isError"] == true || !strings.Contains(s, "sampled by the TypeScript client") {
		t.Errorf("sampling result: %v", out.Sampling)
	}
	if len(out.Asked) != 2 || !strings.HasPrefix(out.Asked[0], "elicitation: Please provide inputs") || !strings.Contains(out.Asked[1], "from ts") {
		t.Errorf("asked: %q", out.Asked)
	}
}

// TestEverythingDeclinedByTheTypeScriptClient: the TypeScript client
// declines the elicitation and refuses the sampling request (an error
// answer); through /mcp the server hears each as such, and each call ends
// with what the server makes of it, as a result, not a protocol error.
func TestEverythingDeclinedByTheTypeScriptClient(t *testing.T) {
	t.Parallel()
	out := runTSAnsweringClient(t, "", "decline")
	if e := fmt.Sprint(out.Elicitation["content"]); out.Elicitation["isError"] == true || !strings.Contains(e, "User declined") {
		t.Errorf("declined elicitation: %v", out.Elicitation)
	}
	if s := fmt.Sprint(out.Sampling["content"]); out.Sampling["isError"] != true || !strings.Contains(s, "the user refused the sampling request") {
		t.Errorf("refused sampling: %v", out.Sampling)
	}
	if len(out.Asked) != 2 {
		t.Errorf("asked: %q", out.Asked)
	}
}

// TestEverythingExpiredBeforeTheTypeScriptClientAnswered: the TypeScript
// client never answers; when limits.pendingTimeout passes, the request is
// withdrawn from it, the server is told, and each call ends with an
// is_error result saying the request expired, instead of waiting on the
// client for ever. (The go-sdk sends the client's notifications/cancelled
// best-effort, off the call's path, so whether the client hears of it
// before the call's stream ends is not asserted.)
func TestEverythingExpiredBeforeTheTypeScriptClientAnswered(t *testing.T) {
	t.Parallel()
	out := runTSAnsweringClient(t, `"pendingTimeout": 300`, "silent")
	for what, res := range map[string]map[string]any{"elicitation": out.Elicitation, "sampling": out.Sampling} {
		if c := fmt.Sprint(res["content"]); res["isError"] != true || !strings.Contains(c, "expired before it was answered") {
			t.Errorf("%s nobody answered: %v", what, res)
		}
	}
	var requests []string
	for _, a := range out.Asked {
		if !strings.HasPrefix(a, "cancelled: ") {
			requests = append(requests, a)
		}
	}
	if len(requests) != 2 || !strings.HasPrefix(requests[0], "elicitation: ") || !strings.HasPrefix(requests[1], "sampling: ") {
		t.Errorf("asked %q; want the elicitation and the sampling request", out.Asked)
	}
}
