// Command minproxy is the smallest program that does what toolnexus does
// for an MCP tool: RegistryService.Execute in, go-sdk CallTool on one stdio
// MCP session, the text content out. No interceptors, no metrics, no
// validation, no limits. `make bench` measures toolnexus against it, both
// as separate processes with the same MCP server as their child.
//
//	minproxy TOOL COMMAND [ARG...]   (prints its address on stdout)
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net"
	"os"
	"os/exec"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"

	"github.com/toolnexus/toolnexus/bench/internal/profile"
	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

type proxy struct {
	pb.UnimplementedRegistryServiceServer
	sess *mcp.ClientSession
	tool string
}

func (p *proxy) Execute(ctx context.Context, req *pb.ExecuteRequest) (*pb.ExecuteResponse, error) {
	res, err := p.sess.CallTool(ctx, &mcp.CallToolParams{Name: p.tool, Arguments: json.RawMessage(req.GetArgumentsJson())})
	if err != nil {
		return &pb.ExecuteResponse{Result: &pb.ToolResult{Output: err.Error(), IsError: true, Outcome: pb.Outcome_OUTCOME_TOOL_ERROR}}, nil
	}
	var out strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			out.WriteString(t.Text)
		}
	}
	return &pb.ExecuteResponse{Result: &pb.ToolResult{Output: out.String(), IsError: res.IsError, Outcome: pb.Outcome_OUTCOME_OK}}, nil
}

func main() {
	profile.Serve()
	profile.Pace()
	if len(os.Args) < 3 {
		log.Fatal("usage: minproxy TOOL COMMAND [ARG...]")
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "minproxy", Version: "1.0.0"}, nil)
	sess, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: exec.Command(os.Args[2], os.Args[3:]...)}, nil)
	if err != nil {
		log.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	s := grpc.NewServer()
	pb.RegisterRegistryServiceServer(s, &proxy{sess: sess, tool: os.Args[1]})
	fmt.Println(lis.Addr())
	log.Fatal(s.Serve(lis))
}
