package grpcapi_test

import (
	"context"
	"fmt"
	"testing"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
)

// BenchmarkReadResource1MiB reads a 1 MiB resource (a blob) of a go-sdk MCP
// server over streamable HTTP on loopback: directly with the go-sdk client,
// and through toolnexus's FeatureService.ReadResource over gRPC on loopback
// TCP (core, MCP source, the same upstream hop). The budget is
// toolnexus/direct <= 1.2, both measured in the same run:
//
//	go test -run '^$' -bench ReadResource1MiB -count 6 ./internal/grpcapi/
//
// (internal/mcpgateway has the same benchmark through /mcp.)
func BenchmarkReadResource1MiB(b *testing.B) {
	const size = 1 << 20
	up := testutil.StartFeatureUpstream(b, "big", testutil.FeatureUpstreamOptions{Big: size})
	f := startFront(b, fmt.Sprintf(`{"builtins": false, "mcpServers": {"big": {"url": %q}}}`, up.URL))
	b.Run("direct", func(b *testing.B) { testutil.BenchReadResource(b, up.URL, "file:///big.bin", size) })
	b.Run("toolnexus-grpc", func(b *testing.B) {
		b.SetBytes(size)
		cpu := testutil.CPUTime()
		for b.Loop() {
			res, err := f.features.ReadResource(context.Background(), &pb.ReadResourceRequest{Uri: "file:///big.bin"})
			if err != nil || len(res.GetContents()) != 1 || len(res.GetContents()[0].GetBlob()) != size {
				b.Fatalf("read: %v", err)
			}
		}
		testutil.CPUPerOp(b, cpu)
	})
}
