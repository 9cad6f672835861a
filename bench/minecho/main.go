// Command minecho is the smallest gRPC server that does debug_echo's job:
// RegistryService.Execute returns arguments_json as the output. No
// interceptors, no registry, no metrics, no validation. `make bench`
// measures toolnexus's debug_echo against it, both as separate processes.
// It prints its address on stdout.
package main

import (
	"context"
	"fmt"
	"log"
	"net"

	"google.golang.org/grpc"

	"github.com/toolnexus/toolnexus/bench/internal/profile"
	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

type echo struct {
	pb.UnimplementedRegistryServiceServer
}

func (echo) Execute(_ context.Context, req *pb.ExecuteRequest) (*pb.ExecuteResponse, error) {
	return &pb.ExecuteResponse{Result: &pb.ToolResult{Output: req.GetArgumentsJson(), Outcome: pb.Outcome_OUTCOME_OK}}, nil
}

func main() {
	profile.Serve()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	s := grpc.NewServer()
	pb.RegisterRegistryServiceServer(s, echo{})
	fmt.Println(lis.Addr())
	log.Fatal(s.Serve(lis))
}
