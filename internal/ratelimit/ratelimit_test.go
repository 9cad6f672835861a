package ratelimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/ratelimit"
	"github.com/toolnexus/toolnexus/internal/ratelimit/ratelimittest"
)

func TestPrincipalsAreLimitedApart(t *testing.T) {
	t.Parallel()
	l := ratelimit.New(config.RateLimits{Principals: map[string]config.PrincipalRate{
		"slow": {Rate: config.Rate{CallsPerSecond: 2, Burst: 1}},
		"*":    {Rate: config.Rate{CallsPerSecond: 1000, Burst: 1000}},
	}})
	now := time.Unix(1000, 0)
	if _, r := l.Admit(context.Background(), "slow", "t", now); r != nil {
		t.Fatal(r)
	}
	_, r := l.Admit(context.Background(), "slow", "t", now)
	if r == nil || r.Limit != "limits.principals.slow.callsPerSecond" || r.RetryAfter != 500*time.Millisecond {
		t.Fatalf("%+v", r)
	}
	for range 100 {
		if _, r := l.Admit(context.Background(), "fast", "t", now); r != nil {
			t.Fatalf("another principal is slowed: %+v", r)
		}
	}
	if _, r := l.Admit(context.Background(), "slow", "t", now.Add(500*time.Millisecond)); r != nil {
		t.Fatalf("after the delay: %+v", r)
	}
}

func TestConcurrentAndTool(t *testing.T) {
	t.Parallel()
	l := ratelimit.New(config.RateLimits{
		Principals: map[string]config.PrincipalRate{"*": {Concurrent: 1}},
		Tools:      map[string]config.Rate{"bash": {CallsPerSecond: 1, Burst: 1}},
	})
	now := time.Unix(1000, 0)
	t1, r := l.Admit(context.Background(), "a", "read", now)
	if r != nil {
		t.Fatal(r)
	}
	if _, r := l.Admit(context.Background(), "a", "read", now); r == nil || r.Limit != "limits.principals.*.concurrent" {
		t.Fatalf("second at once: %+v", r)
	}
	t1.Release()
	t2, r := l.Admit(context.Background(), "a", "bash", now)
	if r != nil {
		t.Fatalf("after release: %+v", r)
	}
	t2.Release()
	if _, r := l.Admit(context.Background(), "b", "bash", now); r == nil || r.Limit != "limits.tools.bash.callsPerSecond" {
		t.Fatalf("tool rate is across principals: %+v", r)
	}
	if l := ratelimit.New(config.RateLimits{}); l != nil {
		t.Fatal("no limits must mean no limiter")
	}
	var none *ratelimit.Limiter
	if _, r := none.Admit(context.Background(), "a", "b", now); r != nil {
		t.Fatal(r)
	}
}

// BenchmarkAdmit64 is the rate-limit check of one call with 64 callers at
// once, all one principal (the worst case: one bucket, one lock), the
// bucket far above the load so nothing is refused.
func BenchmarkAdmit64(b *testing.B) {
	l := ratelimit.New(config.RateLimits{Principals: map[string]config.PrincipalRate{"*": {Rate: config.Rate{CallsPerSecond: 1e12, Burst: 1 << 40}}}})
	b.ReportAllocs()
	b.SetParallelism(32)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			t, r := l.Admit(context.Background(), "agent", "debug_echo", time.Now())
			if r != nil {
				b.Fatal(r)
			}
			t.Release()
		}
	})
}

// TestRefusalChargesNothing: the principal's limit is checked before the
// tool's shared bucket, and a refused call gives back what it took: a
// caller over its own limit leaves the tool's token to others, and a call
// the tool's bucket refuses does not spend the caller's own token.
func TestRefusalChargesNothing(t *testing.T) {
	now := time.Now()
	l := ratelimit.New(config.RateLimits{
		Principals: map[string]config.PrincipalRate{"greedy": {Rate: config.Rate{CallsPerSecond: 0.001, Burst: 1}}, "busy": {Rate: config.Rate{CallsPerSecond: 0.001, Burst: 1}}},
		Tools:      map[string]config.Rate{"bash": {CallsPerSecond: 0.001, Burst: 1}, "read": {CallsPerSecond: 0.001, Burst: 1}}})
	t.Run("principal refused first", func(t *testing.T) {
		if _, r := l.Admit(context.Background(), "greedy", "write", now); r != nil {
			t.Fatal(r)
		}
		if _, r := l.Admit(context.Background(), "greedy", "bash", now); r == nil || r.Limit != "limits.principals.greedy.callsPerSecond" {
			t.Fatalf("want greedy's own limit, got %+v", r)
		}
		if _, r := l.Admit(context.Background(), "other", "bash", now); r != nil {
			t.Fatalf("greedy's refused call spent bash's token: %+v", r)
		}
	})
	t.Run("tool refused gives the principal's token back", func(t *testing.T) {
		if _, r := l.Admit(context.Background(), "someone", "read", now); r != nil {
			t.Fatal(r)
		}
		if _, r := l.Admit(context.Background(), "busy", "read", now); r == nil || r.Limit != "limits.tools.read.callsPerSecond" {
			t.Fatalf("want read's limit, got %+v", r)
		}
		if _, r := l.Admit(context.Background(), "busy", "write", now); r != nil {
			t.Fatalf("the refused call spent busy's own token: %+v", r)
		}
	})
}

func TestMemoryRatesContract(t *testing.T) {
	ratelimittest.Run(t, func(*testing.T) ratelimit.Rates { return ratelimit.NewMemory() })
}
