package server_test

import (
	"context"
	"testing"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
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
