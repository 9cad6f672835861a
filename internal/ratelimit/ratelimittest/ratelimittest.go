// Package ratelimittest is the contract every ratelimit.Rates passes: run
// it from the implementation's own tests with a constructor that returns
// empty buckets. It runs on the real clock (a shared store keeps its own),
// with rates slow enough that no bucket refills during a check unless the
// check waits for it.
package ratelimittest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/ratelimit"
)

// Run runs the contract; each subtest gets fresh buckets from newRates.
func Run(t *testing.T, newRates func(t *testing.T) ratelimit.Rates) {
	t.Helper()
	for _, c := range []struct {
		name string
		run  func(*testing.T, ratelimit.Rates)
	}{
		{"BurstThenRefused", burstThenRefused},
		{"PrincipalsApart", principalsApart},
		{"ToolSharedByPrincipals", toolShared},
		{"PrincipalRefusedFirstSpendsNoToolToken", principalFirst},
		{"ToolRefusalGivesThePrincipalsTokenBack", toolGivesBack},
		{"RefillsAtItsRate", refills},
		{"NoBucketsAdmit", noBuckets},
		{"ConcurrentTakesKeepTheBurst", concurrentTakes},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, newRates(t)) })
	}
}

// slow is a rate that refills nothing within a test: one call per 1000 s.
func slow(burst int) config.Rate { return config.Rate{CallsPerSecond: 0.001, Burst: burst} }

func p(name string, r config.Rate) ratelimit.Bucket { return ratelimit.Bucket{Name: name, Rate: r} }

var none ratelimit.Bucket

func take(t *testing.T, r ratelimit.Rates, principal, tool ratelimit.Bucket) (ratelimit.Refuser, time.Duration) {
	t.Helper()
	by, retry, err := r.Take(context.Background(), time.Now(), principal, tool)
	if err != nil {
		t.Fatalf("Take(%q, %q): %v", principal.Name, tool.Name, err)
	}
	return by, retry
}

func admit(t *testing.T, r ratelimit.Rates, principal, tool ratelimit.Bucket) {
	t.Helper()
	if by, _ := take(t, r, principal, tool); by != ratelimit.Admitted {
		t.Fatalf("Take(%q, %q) refused by %d, want admitted", principal.Name, tool.Name, by)
	}
}

func refused(t *testing.T, r ratelimit.Rates, principal, tool ratelimit.Bucket, want ratelimit.Refuser) time.Duration {
	t.Helper()
	by, retry := take(t, r, principal, tool)
	if by != want {
		t.Fatalf("Take(%q, %q) = %d, want refused by %d", principal.Name, tool.Name, by, want)
	}
	return retry
}

func burstThenRefused(t *testing.T, r ratelimit.Rates) {
	for range 3 {
		admit(t, r, p("alice", slow(3)), none)
	}
	retry := refused(t, r, p("alice", slow(3)), none, ratelimit.ByPrincipal)
	// One token at 0.001/s is 1000 s away, less what elapsed since.
	if retry < 990*time.Second || retry > 1000*time.Second {
		t.Fatalf("retry after %v, want about 1000 s", retry)
	}
}

func principalsApart(t *testing.T, r ratelimit.Rates) {
	admit(t, r, p("alice", slow(1)), none)
	refused(t, r, p("alice", slow(1)), none, ratelimit.ByPrincipal)
	admit(t, r, p("bob", slow(1)), none)
}

func toolShared(t *testing.T, r ratelimit.Rates) {
	admit(t, r, none, p("bash", slow(2)))
	admit(t, r, p("alice", slow(10)), p("bash", slow(2)))
	retry := refused(t, r, p("bob", slow(10)), p("bash", slow(2)), ratelimit.ByTool)
	if retry <= 0 {
		t.Fatalf("retry after %v", retry)
	}
}

func principalFirst(t *testing.T, r ratelimit.Rates) {
	admit(t, r, p("greedy", slow(1)), none)
	refused(t, r, p("greedy", slow(1)), p("bash", slow(1)), ratelimit.ByPrincipal)
	admit(t, r, p("other", slow(1)), p("bash", slow(1))) // bash's one token is still there
}

func toolGivesBack(t *testing.T, r ratelimit.Rates) {
	admit(t, r, p("someone", slow(1)), p("read", slow(1)))
	refused(t, r, p("busy", slow(1)), p("read", slow(1)), ratelimit.ByTool)
	admit(t, r, p("busy", slow(1)), none) // busy's own token was given back
}

func refills(t *testing.T, r ratelimit.Rates) {
	fast := config.Rate{CallsPerSecond: 20, Burst: 1}
	admit(t, r, p("alice", fast), none)
	retry := refused(t, r, p("alice", fast), none, ratelimit.ByPrincipal)
	if retry <= 0 || retry > 50*time.Millisecond {
		t.Fatalf("retry after %v, want at most 50 ms at 20/s", retry)
	}
	time.Sleep(retry + 10*time.Millisecond)
	admit(t, r, p("alice", fast), none)
}

func noBuckets(t *testing.T, r ratelimit.Rates) {
	for range 100 {
		admit(t, r, none, none)
	}
}

func concurrentTakes(t *testing.T, r ratelimit.Rates) {
	var mu sync.Mutex
	admitted := 0
	var wg sync.WaitGroup
	for range 40 {
		wg.Go(func() {
			by, _, err := r.Take(context.Background(), time.Now(), p("alice", slow(10)), p("bash", slow(100)))
			if err != nil {
				t.Error(err)
				return
			}
			if by == ratelimit.Admitted {
				mu.Lock()
				admitted++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if admitted != 10 {
		t.Fatalf("40 calls at once admitted %d, want exactly the burst, 10", admitted)
	}
}
