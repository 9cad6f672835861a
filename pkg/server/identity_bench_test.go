package server_test

import (
	"syscall"
	"testing"
	"time"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil/oidcop"
)

// BenchmarkExecuteAuth is one Execute of debug_echo over loopback gRPC
// with a static token and with a JWT from a real provider (zitadel/oidc), on the same
// server: the JWT is verified once and then found in the cache, so its
// CPU per call (cpu-ns/op, client and server, both in this process) should
// be within 5 % of the static token's. Compare the two rows of one run.
func BenchmarkExecuteAuth(b *testing.B) {
	p := oidcop.Start(b, users...)
	t := &testing.T{}
	g := startGateway(t, identityConfig(p.Issuer, ""))
	defer g.stop()
	jwt := tokenFor(b, p, "alice")
	req := &pb.ExecuteRequest{Name: "debug_echo", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{"message":"hello"}`}}
	for _, c := range []struct{ name, tok string }{{"static", "static-agent-secret-01"}, {"jwt", jwt}} {
		b.Run(c.name, func(b *testing.B) {
			ctx := bearerCtx(c.tok)
			if _, err := g.grpc.Execute(ctx, req); err != nil { // warm: the JWT's one verification
				b.Fatal(err)
			}
			b.ReportAllocs()
			before := cpuTime()
			b.ResetTimer()
			for b.Loop() {
				if _, err := g.grpc.Execute(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(cpuTime()-before)/float64(b.N), "cpu-ns/op")
		})
	}
}

// cpuTime is the process's user plus system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
