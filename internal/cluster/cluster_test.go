package cluster_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/toolnexus/toolnexus/internal/cluster"
	"github.com/toolnexus/toolnexus/internal/config"
	tu "github.com/toolnexus/toolnexus/internal/testutil"
)

// redisConfig is cluster.redis for srv, as config.Parse would make it.
func redisConfig(t testing.TB, srv *tu.RedisServer, extra string) config.Redis {
	t.Helper()
	cfg, err := config.Parse([]byte(`{"cluster": {"redis": {"url": "`+srv.URL+`", "keyPrefix": "test:", "timeout": 2000`+extra+`}}}`), "", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return *cfg.Cluster.Redis
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newClient(t testing.TB, cfg config.Redis, reg prometheus.Registerer, onHealth func(bool)) *cluster.Client {
	t.Helper()
	c, err := cluster.New(cfg, cluster.Options{Logger: quiet(), Metrics: reg, OnHealth: onHealth, HealthInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// waitFor polls cond (a state reached in the background) for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestClientFollowsRedisDownAndBackWithoutRestart(t *testing.T) {
	srv := tu.StartRedis(t)
	reg := prometheus.NewRegistry()
	var downs, ups atomic.Int32
	c := newClient(t, redisConfig(t, srv, ""), reg, func(up bool) {
		if up {
			ups.Add(1)
		} else {
			downs.Add(1)
		}
	})
	if !c.Up() {
		t.Fatal("Up is false right after New with Redis running")
	}
	up := func() bool { return strings.Contains(gather(t, reg), "\ntoolnexus_cluster_up 1\n") }
	if !up() {
		t.Fatalf("toolnexus_cluster_up is not 1:\n%s", gather(t, reg))
	}
	srv.Kill()
	waitFor(t, "Up turns false after kill -9", func() bool { return !c.Up() })
	if up() || downs.Load() != 1 {
		t.Fatalf("after the kill: gauge up %v, downs %d", up(), downs.Load())
	}
	srv.Start()
	waitFor(t, "Up turns true when Redis returns", func() bool { return c.Up() })
	if err := c.Redis().Set(context.Background(), c.Key("k"), "v", 0).Err(); err != nil {
		t.Fatalf("after Redis returned: %v", err)
	}
	if ups.Load() != 2 { // the first check at New, then the return
		t.Fatalf("OnHealth(true) heard %d times, want 2", ups.Load())
	}
}

func TestClientStartsWhileRedisIsDown(t *testing.T) {
	srv := tu.StartRedis(t)
	srv.Kill()
	c := newClient(t, redisConfig(t, srv, ""), nil, nil)
	if c.Up() {
		t.Fatal("Up is true with Redis down")
	}
	srv.Start()
	waitFor(t, "Up once Redis starts", c.Up)
}

func TestMetricsCountOperationsErrorsAndLatency(t *testing.T) {
	srv := tu.StartRedis(t)
	reg := prometheus.NewRegistry()
	c := newClient(t, redisConfig(t, srv, ""), reg, nil)
	ctx := context.Background()
	for range 3 {
		if err := c.Redis().Incr(ctx, c.Key("n")).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// A reply error counts as an error of its command; "no such key" does not.
	_ = c.Redis().LPush(ctx, c.Key("n"), "x").Err() // WRONGTYPE
	if err := c.Redis().Get(ctx, c.Key("missing")).Err(); err == nil {
		t.Fatal("GET of a missing key answered a value")
	}
	text := gather(t, reg)
	for _, want := range []string{
		`toolnexus_cluster_operations_total{op="incr"} 3`,
		`toolnexus_cluster_errors_total{op="lpush"} 1`,
		`toolnexus_cluster_operation_seconds_count{op="incr"} 3`,
		`toolnexus_cluster_fallbacks_total{store="ratelimit"} 0`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(text, `toolnexus_cluster_errors_total{op="get"}`) {
		t.Error("a GET of a missing key counted as an error")
	}
}

func TestPasswordFromAFileAuthenticates(t *testing.T) {
	srv := tu.StartRedis(t, tu.RedisPassword("s3cret-redis-pw"))
	t.Setenv("TN_TEST_REDIS_PW", "s3cret-redis-pw")
	c := newClient(t, redisConfig(t, srv, `, "password": "${TN_TEST_REDIS_PW}"`), nil, nil)
	if !c.Up() {
		t.Fatal("not up with the right password")
	}
	t.Setenv("TN_TEST_REDIS_PW", "wrong")
	bad := newClient(t, redisConfig(t, srv, `, "password": "${TN_TEST_REDIS_PW}"`), nil, nil)
	if bad.Up() {
		t.Fatal("up with a wrong password")
	}
}

func TestUnreachable(t *testing.T) {
	srv := tu.StartRedis(t)
	c := newClient(t, redisConfig(t, srv, ""), nil, nil)
	ctx := context.Background()
	if err := c.Redis().Get(ctx, c.Key("none")).Err(); cluster.Unreachable(err) {
		t.Fatalf("a missing key is unreachable: %v", err)
	}
	if err := c.Redis().LPush(ctx, c.Key("s"), "x").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Redis().Incr(ctx, c.Key("s")).Err(); err == nil || cluster.Unreachable(err) {
		t.Fatalf("a WRONGTYPE reply: %v, unreachable %v", err, cluster.Unreachable(err))
	}
	srv.Kill()
	if err := c.Redis().Get(ctx, c.Key("none")).Err(); !cluster.Unreachable(err) {
		t.Fatalf("after kill -9: %v is not unreachable", err)
	}
	if cluster.Unreachable(nil) || !cluster.Unreachable(context.DeadlineExceeded) || !cluster.Unreachable(errors.New("EOF")) {
		t.Fatal("Unreachable misjudges plain errors")
	}
}

func TestLiveReplicasListsEveryClientUntilItCloses(t *testing.T) {
	srv := tu.StartRedis(t)
	cfg := redisConfig(t, srv, "")
	a, b := newClient(t, cfg, nil, nil), newClient(t, cfg, nil, nil)
	if a.Replica() == b.Replica() {
		t.Fatalf("two clients share the replica id %s", a.Replica())
	}
	live, err := a.LiveReplicas(context.Background())
	if err != nil || len(live) != 2 {
		t.Fatalf("live = %v, %v; want both", live, err)
	}
	b.Close()
	live, _ = a.LiveReplicas(context.Background())
	if len(live) != 1 || live[0] != a.Replica() {
		t.Fatalf("after b closed: live = %v", live)
	}
}

// gather is the registry in the text exposition format, as /metrics serves it.
func gather(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	return rec.Body.String()
}

// The replicas of one deployment agree on a secret made once, even when
// they all ask at once; another deployment (another prefix) gets its own.
func TestSharedSecretIsMadeOnceAndAgreed(t *testing.T) {
	srv := tu.StartRedis(t)
	cfg := redisConfig(t, srv, "")
	var clients []*cluster.Client
	for range 4 {
		clients = append(clients, newClient(t, cfg, nil, nil))
	}
	got := make([][]byte, len(clients))
	errs := make(chan error, len(clients))
	for i, c := range clients {
		go func() {
			var err error
			got[i], err = c.SharedSecret(context.Background(), "mcp-state", 32)
			errs <- err
		}()
	}
	for range clients {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for i := range got {
		if len(got[i]) != 32 || string(got[i]) != string(got[0]) {
			t.Fatalf("replica %d has another secret (%d bytes)", i, len(got[i]))
		}
	}
	other := redisConfig(t, srv, "")
	other.KeyPrefix = "other:"
	theirs, err := newClient(t, other, nil, nil).SharedSecret(context.Background(), "mcp-state", 32)
	if err != nil || string(theirs) == string(got[0]) {
		t.Fatalf("another deployment's secret: same=%v err=%v", string(theirs) == string(got[0]), err)
	}
}
