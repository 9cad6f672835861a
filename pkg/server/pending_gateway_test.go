package server_test

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
)

// TestEverythingRelayedThroughMCPGateway: an MCP client of /mcp that
// declares elicitation and sampling answers server-everything's requests
// itself (relayed through toolnexus, the go-sdk client on the newest
// protocol); a client that declares neither has them declined for it.
func TestEverythingRelayedThroughMCPGateway(t *testing.T) {
	t.Parallel()
	entry := everythingServer(t)
	g := startGateway(t, fmt.Sprintf(`{"builtins": false, "skills": [], "mcpServers": {"everything": {"command": "node", "args": [%q, "stdio"], "timeout": 60000}}}`, entry))

	var asked []string
	cs := g.mustConnect(t, "", &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked = append(asked, req.Params.Message)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Katherine Johnson"}}, nil
		},
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "client-model", Content: &mcp.TextContent{Text: "sampled by the MCP client"}}, nil
		},
	})
	res := callMCP(t, cs, "everything_trigger-elicitation-request", map[string]any{})
	if res.IsError || !strings.Contains(text(t, res), "- Name: Katherine Johnson") || len(asked) != 1 || asked[0] != "Please provide inputs for the following fields:" {
		t.Fatalf("elicitation through /mcp: %q (asked %q)", text(t, res), asked)
	}
	res = callMCP(t, cs, "everything_trigger-sampling-request", map[string]any{"prompt": "hello"})
	if res.IsError || !strings.Contains(text(t, res), "sampled by the MCP client") {
		t.Fatalf("sampling through /mcp: %q", text(t, res))
	}

	plainClient := g.mustConnect(t, "", nil)
	res = callMCP(t, plainClient, "everything_trigger-elicitation-request", map[string]any{})
	if res.IsError || !strings.Contains(text(t, res), "User declined") {
		t.Fatalf("a client without elicitation: %q", text(t, res))
	}
}

// TestEverythingRelayedToTheTypeScriptClient: the official TypeScript SDK
// client (an older protocol than toolnexus's newest, so the server asks it
// with elicitation/create and sampling/createMessage during the call)
// answers server-everything's requests through /mcp, and its answers come
// back in the results.
func TestEverythingRelayedToTheTypeScriptClient(t *testing.T) {
	t.Parallel()
	entry := everythingServer(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH")
	}
	nodeDir, err := filepath.Abs(filepath.Join("..", "..", "e2e", "node"))
	if err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, fmt.Sprintf(`{"builtins": false, "skills": [], "mcpServers": {"everything": {"command": "node", "args": [%q, "stdio"], "timeout": 60000}}}`, entry))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("testdata", "mcp-answering-client.mjs"), nodeDir, g.url)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node client: %v\nstderr:\n%s", err, stderr.String())
	}
	var out struct {
		Elicitation, Sampling map[string]any
		Asked                 []string
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("stdout %q: %v", stdout.String(), err)
	}
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
