package server_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
)

// BenchmarkClusterExecute is one Execute of debug_echo at a time over
// loopback gRPC, with and without a control plane (cluster.redis on a
// loopback redis-server), for a call with no rate limit (the control
// plane must cost nothing: budget ≤ 1.02×) and for a rate-limited one
// (one script round trip: budget p50 + 150 µs). It reports the p50.
func BenchmarkClusterExecute(b *testing.B) {
	srv := testutil.StartRedis(b)
	const base = `{"debug": true, "builtins": false, "skills": []`
	const limited = `, "limits": {"principals": {"*": {"callsPerSecond": 1e9, "burst": 1000000000}}}`
	cluster := fmt.Sprintf(`, "cluster": {"name": "test", "redis": {"url": %q}}`, srv.URL)
	for _, c := range []struct{ name, cfg string }{
		{"nolimit/local", base + "}"},
		{"nolimit/redis", base + cluster + "}"},
		{"ratelimited/local", base + limited + "}"},
		{"ratelimited/redis", base + limited + cluster + "}"},
	} {
		b.Run(c.name, func(b *testing.B) {
			t := &testing.T{}
			f := start(t, c.cfg)
			defer f.stop()
			req := &pb.ExecuteRequest{Name: "debug_echo", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{"message":"hello"}`}}
			var took []time.Duration
			b.ReportAllocs()
			for b.Loop() {
				start := time.Now()
				if _, err := f.reg.Execute(context.Background(), req); err != nil {
					b.Fatal(err)
				}
				took = append(took, time.Since(start))
			}
			reportPercentiles(b, took)
		})
	}
}

// BenchmarkClusterApprovalWake is the time from an approval recorded on
// replica B to the end of a caller's ExecuteStream waiting on replica A
// (both sharing a loopback redis-server): the pub/sub wake-up, the claim
// and the tool's run. It reports p50 and p99.
func BenchmarkClusterApprovalWake(b *testing.B) {
	srv := testutil.StartRedis(b)
	addrs := approvalReplicaAddrs(b, srv)
	dial := func(addr string) *grpc.ClientConn {
		conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { conn.Close() })
		return conn
	}
	regA := pb.NewRegistryServiceClient(dial(addrs[0]))
	aprB := pb.NewApprovalServiceClient(dial(addrs[1]))
	var took []time.Duration
	i := 0
	for b.Loop() {
		i++
		stream, err := regA.ExecuteStream(bearer(testutil.PolAgentA), &pb.ExecuteRequest{Name: "write",
			Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: fmt.Sprintf(`{"path": "b%d.txt", "content": "b"}`, i)}})
		if err != nil {
			b.Fatal(err)
		}
		ev, err := stream.Recv()
		if err != nil {
			b.Fatal(err)
		}
		id, _ := strings.CutPrefix(ev.GetLog().GetData().GetStringValue(), "waiting for approval ")
		if _, err := aprB.Approve(bearer(testutil.PolReviewer), &pb.ApproveRequest{Id: id}); err != nil {
			b.Fatal(err)
		}
		decided := time.Now()
		for {
			ev, err := stream.Recv()
			if err != nil {
				b.Fatal(err)
			}
			if res := ev.GetResult(); res != nil {
				if res.GetIsError() {
					b.Fatal(res.GetOutput())
				}
				break
			}
		}
		took = append(took, time.Since(decided))
	}
	reportPercentiles(b, took)
}

func reportPercentiles(b *testing.B, took []time.Duration) {
	if len(took) == 0 {
		return
	}
	slices.Sort(took)
	at := func(q float64) float64 { return float64(took[int(q*float64(len(took)-1))].Microseconds()) }
	b.ReportMetric(at(0.5), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}
