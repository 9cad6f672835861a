package ratelimit_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/ratelimit"
	"github.com/toolnexus/toolnexus/internal/testutil"
)

// BenchmarkAdmit is one rate-limited Admit: the local bucket, and the
// shared one (one EVALSHA on a loopback redis-server), the cost a
// rate-limited call pays for exact limits across replicas.
func BenchmarkAdmit(b *testing.B) {
	srv := testutil.StartRedis(b)
	rl := principalRate(1e9, 1_000_000_000)
	shared, _, _ := replicas(b, srv, 1, rl)
	for _, c := range []struct {
		name string
		l    *ratelimit.Limiter
	}{{"local", ratelimit.New(rl)}, {"redis", shared[0]}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				if _, r := c.l.Admit(context.Background(), "agent", "echo", start); r != nil {
					b.Fatal(r)
				}
				took = append(took, time.Since(start))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Nanoseconds())/1e3, "p50-µs")
		})
	}
}
