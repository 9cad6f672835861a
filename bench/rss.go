package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc"

	"github.com/toolnexus/toolnexus/bench/serverproc"
	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

// serverRSS starts the real server binary with cfg, lists all tools once
// (so the per-revision caches exist), waits for it to settle and reads
// process_resident_memory_bytes from its own /metrics.
func serverRSS(bin, tmp, cfg string) (float64, error) {
	p, conn, err := startDialed(bin, tmp, cfg)
	if err != nil {
		return 0, err
	}
	defer p.Stop()
	defer conn.Close()
	if _, err := pb.NewRegistryServiceClient(conn).ListTools(context.Background(), &pb.ListToolsRequest{PageSize: 10000}); err != nil {
		return 0, err
	}
	time.Sleep(time.Second) // let the first listing's garbage be collected before reading RSS
	return p.Metric("process_resident_memory_bytes ")
}

// startDialed starts the real server binary with cfg in dir and dials its
// gRPC port: how the memory measurements (tools and sessions) begin. The
// caller closes conn, then stops p.
func startDialed(bin, dir, cfg string) (*serverproc.Proc, *grpc.ClientConn, error) {
	p, err := serverproc.Start(bin, dir, cfg)
	if err != nil {
		return nil, nil, err
	}
	conn, err := dial(p.Addr)
	if err != nil {
		_ = p.Stop()
		return nil, nil, err
	}
	return p, conn, nil
}

// httpToolsConfig declares n HTTP tools (never called): a realistic way to
// hold 10,000 tools in one server.
func httpToolsConfig(n int) string {
	var b strings.Builder
	b.WriteString(`{"builtins": false, "http": [`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name": "api_%05d", "description": "Fetch record %d from the inventory API.", "url": "http://127.0.0.1:9/records/{id}"}`, i, i)
	}
	b.WriteString(`]}`)
	return b.String()
}
