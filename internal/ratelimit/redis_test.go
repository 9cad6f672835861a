package ratelimit_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/toolnexus/toolnexus/internal/cluster"
	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/ratelimit"
	"github.com/toolnexus/toolnexus/internal/ratelimit/ratelimittest"
	"github.com/toolnexus/toolnexus/internal/testutil"
)

// replicas are n limiters of one config sharing one Redis, as n replicas
// would; reg holds the first one's metrics.
func replicas(t testing.TB, srv *testutil.RedisServer, n int, rl config.RateLimits) (ls []*ratelimit.Limiter, clients []*cluster.Client, reg *prometheus.Registry) {
	t.Helper()
	cfg, err := config.Parse([]byte(`{"cluster": {"name": "test", "redis": {"url": "`+srv.URL+`", "timeout": 2000}}}`), "", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	reg = prometheus.NewRegistry()
	for i := range n {
		r := prometheus.NewRegistry()
		if i == 0 {
			r = reg
		}
		c, err := cluster.New(*cfg.Cluster.Redis, cluster.Options{Metrics: r, HealthInterval: 50 * time.Millisecond,
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		clients = append(clients, c)
		ls = append(ls, ratelimit.New(rl, ratelimit.WithCluster(c)))
	}
	return ls, clients, reg
}

func metricsText(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	return rec.Body.String()
}

func principalRate(cps float64, burst int) config.RateLimits {
	return config.RateLimits{Principals: map[string]config.PrincipalRate{"agent": {Rate: config.Rate{CallsPerSecond: cps, Burst: burst}}}}
}

func TestSharedRateIsExactAcrossReplicas(t *testing.T) {
	srv := testutil.StartRedis(t)
	// One token a second: the 15 calls would have to take a second
	// (a loaded machine under -race) before a refill could admit a sixth.
	ls, _, _ := replicas(t, srv, 3, principalRate(1, 5))
	admitted := 0
	var refusal *ratelimit.Refusal
	for i := range 15 {
		if _, r := ls[i%3].Admit(context.Background(), "agent", "echo", time.Now()); r == nil {
			admitted++
		} else {
			refusal = r
		}
	}
	if admitted != 5 {
		t.Fatalf("admitted %d of 15 calls spread over 3 replicas, want exactly the burst, 5", admitted)
	}
	if refusal.Limit != "limits.principals.agent.callsPerSecond" || refusal.RetryAfter <= 0 || refusal.RetryAfter > time.Second {
		t.Fatalf("refusal %+v", refusal)
	}
	time.Sleep(refusal.RetryAfter)
	if _, r := ls[1].Admit(context.Background(), "agent", "echo", time.Now()); r != nil {
		t.Fatalf("after the retry delay another replica refuses: %+v", r)
	}
}

// A call refused by one bucket takes nothing from the other: the tool's
// rate is not spent by a principal over its own.
func TestSharedBucketsAreTakenAllOrNone(t *testing.T) {
	srv := testutil.StartRedis(t)
	rl := config.RateLimits{
		Principals: map[string]config.PrincipalRate{"slow": {Rate: config.Rate{CallsPerSecond: 0.1, Burst: 1}}},
		Tools:      map[string]config.Rate{"bash": {CallsPerSecond: 0.1, Burst: 2}},
	}
	ls, _, _ := replicas(t, srv, 2, rl)
	if _, r := ls[0].Admit(context.Background(), "slow", "bash", time.Now()); r != nil {
		t.Fatal(r)
	}
	for range 3 {
		if _, r := ls[1].Admit(context.Background(), "slow", "bash", time.Now()); r == nil || r.Limit != "limits.principals.slow.callsPerSecond" {
			t.Fatalf("slow's second call: %+v", r)
		}
	}
	if _, r := ls[1].Admit(context.Background(), "other", "bash", time.Now()); r != nil {
		t.Fatalf("the tool's second token was spent by refused calls: %+v", r)
	}
	if _, r := ls[0].Admit(context.Background(), "other", "bash", time.Now()); r == nil || r.Limit != "limits.tools.bash.callsPerSecond" {
		t.Fatalf("the tool's third call: %+v", r)
	}
}

// Calls no rate applies to never reach Redis.
func TestCallsWithoutARateMakeNoRoundTrip(t *testing.T) {
	srv := testutil.StartRedis(t)
	rl := config.RateLimits{Principals: map[string]config.PrincipalRate{
		"agent":  {Rate: config.Rate{CallsPerSecond: 100, Burst: 100}},
		"capped": {Concurrent: 2},
	}}
	ls, _, reg := replicas(t, srv, 1, rl)
	for range 10 {
		tk, r := ls[0].Admit(context.Background(), "capped", "echo", time.Now())
		if r != nil {
			t.Fatal(r)
		}
		tk.Release()
		if _, r := ls[0].Admit(context.Background(), "unnamed", "echo", time.Now()); r != nil {
			t.Fatal(r)
		}
	}
	if text := metricsText(t, reg); !strings.Contains(text, `toolnexus_cluster_operations_total{op="evalsha"} 0`) || strings.Contains(text, `op="eval"`) {
		t.Fatalf("calls without a rate ran the script:\n%s", grep(text, "toolnexus_cluster_operations_total"))
	}
	if _, r := ls[0].Admit(context.Background(), "agent", "echo", time.Now()); r != nil {
		t.Fatal(r)
	}
	if text := metricsText(t, reg); !strings.Contains(text, `toolnexus_cluster_operations_total{op="evalsha"} 1`) {
		t.Fatalf("a rate-limited call did not ask Redis:\n%s", grep(text, "toolnexus_cluster_operations_total"))
	}
}

// kill -9 Redis: each replica limits on its own (counted), and shares
// again once Redis is back, without being rebuilt.
func TestSharedRateFallsBackToLocalAndRecovers(t *testing.T) {
	srv := testutil.StartRedis(t)
	ls, clients, reg := replicas(t, srv, 3, principalRate(0.5, 2))
	srv.Kill()
	admitted := 0
	for i := range 9 {
		if _, r := ls[i%3].Admit(context.Background(), "agent", "echo", time.Now()); r == nil {
			admitted++
		}
	}
	if admitted != 6 {
		t.Fatalf("Redis down: admitted %d, want each replica's own burst (3 × 2)", admitted)
	}
	if text := metricsText(t, reg); !strings.Contains(text, `toolnexus_cluster_fallbacks_total{store="ratelimit"} 3`) {
		t.Fatalf("fallbacks not counted:\n%s", grep(text, "fallbacks"))
	}
	srv.Start() // an empty Redis: the buckets start full
	deadline := time.Now().Add(10 * time.Second)
	for !(clients[0].Up() && clients[1].Up() && clients[2].Up()) {
		if time.Now().After(deadline) {
			t.Fatal("the clients never saw Redis return")
		}
		time.Sleep(10 * time.Millisecond)
	}
	admitted = 0
	for i := range 9 {
		if _, r := ls[i%3].Admit(context.Background(), "agent", "echo", time.Now()); r == nil {
			admitted++
		}
	}
	if admitted != 2 {
		t.Fatalf("Redis back: admitted %d, want the shared burst, 2", admitted)
	}
}

func grep(text, word string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, word) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// A call refused by this replica's concurrent cap spends nothing in
// Redis; a call Redis refuses gives its concurrent slot back.
func TestSharedRateAndConcurrentCap(t *testing.T) {
	srv := testutil.StartRedis(t)
	rl := config.RateLimits{Principals: map[string]config.PrincipalRate{"agent": {Rate: config.Rate{CallsPerSecond: 0.1, Burst: 2}, Concurrent: 1}}}
	ls, _, _ := replicas(t, srv, 1, rl)
	held, r := ls[0].Admit(context.Background(), "agent", "echo", time.Now())
	if r != nil {
		t.Fatal(r)
	}
	if _, r := ls[0].Admit(context.Background(), "agent", "echo", time.Now()); r == nil || r.Limit != "limits.principals.agent.concurrent" {
		t.Fatalf("second call at once: %+v", r)
	}
	held.Release()
	second, r := ls[0].Admit(context.Background(), "agent", "echo", time.Now())
	if r != nil {
		t.Fatalf("the concurrent refusal spent a token: %+v", r)
	}
	second.Release()
	if _, r := ls[0].Admit(context.Background(), "agent", "echo", time.Now()); r == nil || r.Limit != "limits.principals.agent.callsPerSecond" {
		t.Fatalf("third call: %+v", r)
	}
	if t3, r := ls[0].Admit(context.Background(), "agent", "echo", time.Now()); r == nil {
		t3.Release()
		t.Fatal("a rate refusal kept the concurrent slot, or no refusal")
	}
}

// The buckets in Redis keep the same contract as this process's own.
func TestRedisRatesContract(t *testing.T) {
	srv := testutil.StartRedis(t)
	ratelimittest.Run(t, func(t *testing.T) ratelimit.Rates {
		_, clients, _ := replicas(t, srv, 1, principalRate(1, 1))
		if err := clients[0].Redis().FlushDB(t.Context()).Err(); err != nil { // fresh buckets for each subtest
			t.Fatal(err)
		}
		return ratelimit.NewRedis(clients[0])
	})
}
