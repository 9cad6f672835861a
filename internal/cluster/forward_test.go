package cluster_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/cluster"
	"github.com/toolnexus/toolnexus/internal/suspend/pending/pendingtest"
	tu "github.com/toolnexus/toolnexus/internal/testutil"
)

// Forwarding over Redis keeps the contract pending.Hub keeps in one
// process: replies come back, a replica not listening is gone at once, a
// leaving one ends what it serves. A killed one is tested with real
// processes in pkg/server.
func TestRedisForwardingContract(t *testing.T) {
	srv := tu.StartRedis(t)
	cfg := redisConfig(t, srv, "")
	pendingtest.RunForwarding(t, func(t *testing.T) pendingtest.Replicas {
		a, b := newClient(t, cfg, nil, nil), newClient(t, cfg, nil, nil)
		return pendingtest.Replicas{A: a, B: b, CloseB: func() { b.Close() }}
	})
}

// A replica forwards nothing before it serves: its replies would have no
// channel to come back on.
func TestForwardBeforeServingIsRefused(t *testing.T) {
	srv := tu.StartRedis(t)
	c := newClient(t, redisConfig(t, srv, ""), nil, nil)
	if _, err := c.Forward(context.Background(), "other", []byte(`1`)); err == nil || errors.Is(err, cluster.ErrReplicaGone) {
		t.Fatalf("Forward before ServeForwards = %v", err)
	}
}

// BenchmarkForwardRoundTrip is one forwarded answer's round trip over
// loopback Redis (publish, the owner's reply, delivery), the owner's own
// work excluded.
func BenchmarkForwardRoundTrip(b *testing.B) {
	srv := tu.StartRedis(b)
	cfg := redisConfig(b, srv, "")
	owner, other := newClient(b, cfg, nil, nil), newClient(b, cfg, nil, nil)
	_ = owner.ServeForwards(func(_ context.Context, req []byte) []byte { return req })
	_ = other.ServeForwards(func(context.Context, []byte) []byte { return nil })
	req := []byte(`{"name":"everything_trigger-elicitation-request","arguments":{}}`)
	var took []time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := other.Forward(context.Background(), owner.Replica(), req); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "p99-µs")
}
