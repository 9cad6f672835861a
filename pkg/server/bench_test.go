package server_test

import (
	"context"
	"fmt"
	"testing"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
)

// BenchmarkExecuteGRPC is one Execute of debug_echo over loopback TCP
// through the full interceptor chain; `make bench` compares it with a bare
// grpc-go echo.
func BenchmarkExecuteGRPC(b *testing.B) {
	t := &testing.T{}
	f := start(t, debugOnly)
	defer f.stop()
	req := &pb.ExecuteRequest{Name: "debug_echo", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{"message":"hello"}`}}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := f.reg.Execute(context.Background(), req); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkExecuteGRPCTraced is BenchmarkExecuteGRPC with tracing on:
// every call sampled, its spans exported over OTLP/gRPC to a receiver in
// this process.
func BenchmarkExecuteGRPCTraced(b *testing.B) {
	recv := testutil.StartOTLPReceiver(b)
	recv.Discard()
	t := &testing.T{}
	f := start(t, fmt.Sprintf(`{"debug": true, "builtins": false, "skills": [], "telemetry": {"endpoint": %q, "protocol": "grpc", "sampleRatio": 1}}`, recv.Endpoint))
	defer f.stop()
	req := &pb.ExecuteRequest{Name: "debug_echo", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{"message":"hello"}`}}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := f.reg.Execute(context.Background(), req); err != nil {
				b.Fatal(err)
			}
		}
	})
}
