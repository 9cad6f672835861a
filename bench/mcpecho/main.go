// Command mcpecho is a minimal MCP server over stdio with one `echo` tool,
// built on the official go-sdk. The benchmarks and soak drills run it as a
// real child process of toolnexus (and call it directly, for the baseline).
package main

import (
	"context"
	"encoding/json"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	s := mcp.NewServer(&mcp.Implementation{Name: "mcpecho", Version: "1.0.0"}, nil)
	s.AddTool(&mcp.Tool{
		Name:        "echo",
		Description: "Return the arguments as JSON text.",
		InputSchema: json.RawMessage(`{"type":"object"}`),
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
	})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
