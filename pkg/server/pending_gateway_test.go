package server_test

//lint:file-ignore SA1019 sampling is deprecated in the newest MCP protocol; these tests relay it on purpose.

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestEverythingRelayedThroughMCPGateway: an MCP client of /mcp that
// declares elicitation and sampling answers server-everything's requests
// itself (relayed through toolnexus, the go-sdk client on the newest
// protocol); a client that declares neither has them declined for it.
func TestEverythingRelayedThroughMCPGateway(t *testing.T) {
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
