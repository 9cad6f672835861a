package main

import (
	"context"
	"net"

	"google.golang.org/grpc"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

// The baseline: a bare grpc-go unary service with no interceptors, no
// registry and no tool, answering the same ExecuteRequest/ExecuteResponse
// messages, so the comparison measures exactly what toolnexus adds.
type bareEchoServer interface {
	Echo(context.Context, *pb.ExecuteRequest) (*pb.ExecuteResponse, error)
}

type bareEcho struct{}

func (bareEcho) Echo(_ context.Context, req *pb.ExecuteRequest) (*pb.ExecuteResponse, error) {
	return &pb.ExecuteResponse{Result: &pb.ToolResult{Output: req.GetArgumentsJson(), Outcome: pb.Outcome_OUTCOME_OK}}, nil
}

const bareEchoMethod = "/bench.BareEcho/Echo"

var bareEchoDesc = grpc.ServiceDesc{
	ServiceName: "bench.BareEcho",
	HandlerType: (*bareEchoServer)(nil),
	Methods: []grpc.MethodDesc{{
		MethodName: "Echo",
		Handler: func(srv any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			in := new(pb.ExecuteRequest)
			if err := dec(in); err != nil {
				return nil, err
			}
			return srv.(bareEchoServer).Echo(ctx, in)
		},
	}},
}

func startBare() (addr string, stop func(), err error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	s := grpc.NewServer()
	s.RegisterService(&bareEchoDesc, bareEcho{})
	go func() { _ = s.Serve(lis) }()
	return lis.Addr().String(), s.Stop, nil
}
