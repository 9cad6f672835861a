// Command minecho is the smallest gRPC server that does debug_echo's job:
// RegistryService.Execute returns arguments_json as the output. No
// interceptors, no registry, no metrics, no validation. `make bench`
// measures toolnexus's debug_echo against it, both as separate processes.
// With MINECHO_OTLP_ENDPOINT set it traces every call the way toolnexus
// does, and is the floor the tracing rows compare with.
// It prints its address on stdout.
package main

import (
	"context"
	"fmt"
	"log"
	"net"
	"os"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"

	"github.com/toolnexus/toolnexus/bench/internal/profile"
	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

type echo struct {
	pb.UnimplementedRegistryServiceServer
	tracer trace.Tracer // nil: untraced
}

// executeToolAttrs are the execute_tool span's attributes, made once.
var executeToolAttrs = trace.WithAttributes(
	attribute.String("gen_ai.operation.name", "execute_tool"), attribute.String("gen_ai.tool.name", "debug_echo"),
	attribute.String("toolnexus.source", "debug"), attribute.String("toolnexus.protocol", "grpc"),
	attribute.String("toolnexus.outcome", "ok"))

func (e echo) Execute(ctx context.Context, req *pb.ExecuteRequest) (*pb.ExecuteResponse, error) {
	if e.tracer != nil {
		_, span := e.tracer.Start(ctx, "execute_tool debug_echo", executeToolAttrs)
		defer span.End()
	}
	return &pb.ExecuteResponse{Result: &pb.ToolResult{Output: req.GetArgumentsJson(), Outcome: pb.Outcome_OUTCOME_OK}}, nil
}

func main() {
	profile.Serve()
	profile.Pace()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	var opts []grpc.ServerOption
	var e echo
	if ep := os.Getenv("MINECHO_OTLP_ENDPOINT"); ep != "" {
		// The smallest program that traces as toolnexus does: the otelgrpc
		// server span of each call and an execute_tool span under it with
		// the same attributes, batched and exported over OTLP/gRPC, every
		// call sampled.
		exp, err := otlptracegrpc.New(context.Background(), otlptracegrpc.WithEndpointURL(ep))
		if err != nil {
			log.Fatal(err)
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
		opts = append(opts, grpc.StatsHandler(otelgrpc.NewServerHandler(otelgrpc.WithTracerProvider(tp))))
		e.tracer = tp.Tracer("minecho")
	}
	s := grpc.NewServer(opts...)
	pb.RegisterRegistryServiceServer(s, e)
	fmt.Println(lis.Addr())
	log.Fatal(s.Serve(lis))
}
