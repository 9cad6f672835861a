package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os/exec"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpHTTPEcho serves the echo tool from a go-sdk streamable-HTTP MCP server
// on loopback: the way an agent would call the same tool without toolnexus.
func mcpHTTPEcho() (url string, stop func(), err error) {
	s := mcp.NewServer(&mcp.Implementation{Name: "bench-echo", Version: "1.0.0"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
		})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	hs := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)}
	go func() { _ = hs.Serve(lis) }()
	return "http://" + lis.Addr().String(), func() { _ = hs.Close() }, nil
}

// mcpSession connects a go-sdk client over a transport.
func mcpSession(t mcp.Transport) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "bench-client", Version: "1.0.0"}, nil)
	return c.Connect(context.Background(), t, nil)
}

func mcpHTTPSession(url string) (*mcp.ClientSession, error) {
	return mcpSession(&mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1, DisableStandaloneSSE: true})
}

func mcpStdioSession(bin string) (*mcp.ClientSession, error) {
	return mcpSession(&mcp.CommandTransport{Command: exec.Command(bin)})
}

func mcpEchoCall(s *mcp.ClientSession) func(context.Context) error {
	args := map[string]any{}
	if err := json.Unmarshal([]byte(payload), &args); err != nil {
		panic(err)
	}
	return func(ctx context.Context) error {
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args})
		if err == nil && res.IsError {
			return fmt.Errorf("mcp tool error")
		}
		return err
	}
}
