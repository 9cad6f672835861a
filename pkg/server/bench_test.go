package server_test

import (
	"context"
	"fmt"
	"runtime"
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

// BenchmarkExecuteGRPC64 is BenchmarkExecuteGRPC with 64 callers at once;
// "ratelimited" turns on limits.principals (a bucket far above the load,
// so nothing is refused and only the check is measured). All callers are
// one principal (auth off): every call takes the same bucket, the worst
// case for its lock.
func BenchmarkExecuteGRPC64(b *testing.B) {
	for _, c := range []struct{ name, cfg string }{
		{"off", debugOnly},
		{"ratelimited", `{"debug": true, "builtins": false, "skills": [], "limits": {"principals": {"*": {"callsPerSecond": 1e9, "burst": 1000000000}}}}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			t := &testing.T{}
			f := start(t, c.cfg)
			defer f.stop()
			req := &pb.ExecuteRequest{Name: "debug_echo", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{"message":"hello"}`}}
			b.ReportAllocs()
			b.SetParallelism(64 / max(1, runtime.GOMAXPROCS(0)))
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := f.reg.Execute(context.Background(), req); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}
