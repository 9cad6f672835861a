package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

// BenchmarkExecuteGRPCMCPStdio is one Execute of an MCP tool over loopback
// TCP through the full chain, the MCP server a real child process on stdio
// (this test binary again, serving one echo tool): the path `make bench`
// row 8 measures against bench/minproxy. Allocations per op include the
// gRPC client's.
func BenchmarkExecuteGRPCMCPStdio(b *testing.B) {
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	t := &testing.T{}
	f := start(t, fmt.Sprintf(`{"builtins": false, "skills": [], "mcpServers": {"echo": {"command": [%q, "-test.run=^TestStdioEchoServer$"], "env": {"TN_MCP_ECHO": "1"}}}}`, self))
	defer f.stop()
	req := &pb.ExecuteRequest{Name: "echo_echo", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{"message":"hello"}`}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		resp, err := f.reg.Execute(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		if r := resp.GetResult(); r.GetIsError() || r.GetOutput() != `{"message":"hello"}` || r.GetMetadata().GetFields()["server"].GetStringValue() != "echo" {
			b.Fatalf("echo_echo: %v", r)
		}
	}
}

// TestStdioEchoServer is the MCP server of BenchmarkExecuteGRPCMCPStdio
// when the binary runs with TN_MCP_ECHO set; otherwise it does nothing.
func TestStdioEchoServer(t *testing.T) {
	t.Parallel()
	if os.Getenv("TN_MCP_ECHO") == "" {
		t.Skip("the MCP echo server of BenchmarkExecuteGRPCMCPStdio")
	}
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "echo", Version: "1.0.0"}, nil)
	s.AddTool(&mcpsdk.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcpsdk.CallToolRequest) (*mcpsdk.CallToolResult, error) {
			return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: string(req.Params.Arguments)}}}, nil
		})
	if err := s.Run(context.Background(), &mcpsdk.StdioTransport{}); err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}
