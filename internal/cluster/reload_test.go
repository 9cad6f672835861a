package cluster_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/cluster"
	tu "github.com/toolnexus/toolnexus/internal/testutil"
)

func TestReloadReachesEveryOtherReplicaAndNamesTheFailures(t *testing.T) {
	srv := tu.StartRedis(t)
	cfg := redisConfig(t, srv, "")
	origin := newClient(t, cfg, nil, nil)
	_ = origin.ServeReloads(func(context.Context) (uint64, error) {
		t.Error("the origin applied its own broadcast")
		return 0, nil
	})
	var applied atomic.Int32
	ok := func(rev uint64) cluster.ReloadFunc {
		return func(context.Context) (uint64, error) { applied.Add(1); return rev, nil }
	}
	b, c := newClient(t, cfg, nil, nil), newClient(t, cfg, nil, nil)
	_ = b.ServeReloads(ok(7))
	_ = c.ServeReloads(ok(8))
	bad := newClient(t, cfg, nil, nil)
	_ = bad.ServeReloads(func(context.Context) (uint64, error) {
		return 0, errors.New("config: limits.timeout: must be positive")
	})
	// A replica that heartbeats but never subscribed: listed as silent.
	silent := newClient(t, cfg, nil, nil)

	got, err := origin.BroadcastReload(context.Background(), 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("answers = %+v, want one per other replica (4)", got)
	}
	byID := map[string]cluster.ReplicaReload{}
	for _, a := range got {
		byID[a.Replica] = a
	}
	if a := byID[b.Replica()]; !a.Applied || a.Revision != 7 {
		t.Errorf("b: %+v", a)
	}
	if a := byID[c.Replica()]; !a.Applied || a.Revision != 8 {
		t.Errorf("c: %+v", a)
	}
	if a := byID[bad.Replica()]; a.Applied || !strings.Contains(a.Error, "limits.timeout") {
		t.Errorf("bad: %+v", a)
	}
	if a := byID[silent.Replica()]; a.Applied || !strings.Contains(a.Error, "did not answer within 500ms") {
		t.Errorf("silent: %+v", a)
	}
	if applied.Load() != 2 {
		t.Errorf("applied %d times, want 2", applied.Load())
	}
}

func TestReloadBroadcastWithRedisDownSaysSo(t *testing.T) {
	srv := tu.StartRedis(t)
	origin := newClient(t, redisConfig(t, srv, ""), nil, nil)
	srv.Kill()
	_, err := origin.BroadcastReload(context.Background(), time.Second)
	if err == nil || !strings.Contains(err.Error(), "cannot reach Redis to reach the other replicas") {
		t.Fatalf("err = %v", err)
	}
}

func TestReloadSubscriptionComesBackWithRedis(t *testing.T) {
	srv := tu.StartRedis(t)
	cfg := redisConfig(t, srv, "")
	origin, other := newClient(t, cfg, nil, nil), newClient(t, cfg, nil, nil)
	var applied atomic.Int32
	_ = other.ServeReloads(func(context.Context) (uint64, error) { applied.Add(1); return 1, nil })
	srv.Kill()
	srv.Start()
	waitFor(t, "both clients up again", func() bool { return origin.Up() && other.Up() })
	// go-redis resubscribes in the background; ask until the answer comes.
	waitFor(t, "the other replica applies a reload after Redis returned", func() bool {
		got, err := origin.BroadcastReload(context.Background(), 200*time.Millisecond)
		return err == nil && len(got) == 1 && got[0].Applied
	})
}

// A reload another replica asked for has a deadline: one that hangs is
// answered as not finished in time (the asking replica is not left
// guessing), and the next broadcast is still heard.
func TestReloadThatHangsIsAnsweredAtItsDeadline(t *testing.T) {
	srv := tu.StartRedis(t)
	cfg := redisConfig(t, srv, "")
	origin := newClient(t, cfg, nil, nil)
	stuck, err := cluster.New(cfg, cluster.Options{Logger: quiet(), HealthInterval: 50 * time.Millisecond, ReloadDeadline: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stuck.Close() })
	release := make(chan struct{})
	var calls atomic.Int32
	if err := stuck.ServeReloads(func(ctx context.Context) (uint64, error) {
		if calls.Add(1) == 1 {
			<-release // ignores its ctx, as a reload stuck in a source might
		}
		return 9, nil
	}); err != nil {
		t.Fatal(err)
	}
	got, err := origin.BroadcastReload(context.Background(), 5*time.Second)
	if err != nil || len(got) != 1 || got[0].Applied || !strings.Contains(got[0].Error, "did not finish within 200ms") {
		t.Fatalf("answers to a reload that hangs: %+v %v", got, err)
	}
	got, err = origin.BroadcastReload(context.Background(), 5*time.Second)
	if err != nil || len(got) != 1 || !got[0].Applied || got[0].Revision != 9 {
		t.Fatalf("the next broadcast: %+v %v", got, err)
	}
	close(release) // Close waits for the stuck reload
}

// Subscribe returns Redis's confirmation, or why there was none; its
// goroutine ends, and handle's ctx with it, when it closes.
func TestSubscribeConfirmsAndIsJoinedOnClose(t *testing.T) {
	srv := tu.StartRedis(t)
	cfg := redisConfig(t, srv, "")
	c := newClient(t, cfg, nil, nil)
	got := make(chan string, 1)
	ended := make(chan struct{})
	sub, err := c.Subscribe(c.Key("t"), func(ctx context.Context, payload string) {
		got <- payload
		<-ctx.Done()
		close(ended)
	})
	if err != nil {
		t.Fatalf("Subscribe with Redis up: %v", err)
	}
	if err := c.Redis().Publish(context.Background(), c.Key("t"), "hello").Err(); err != nil {
		t.Fatal(err)
	}
	if p := <-got; p != "hello" {
		t.Fatalf("handled %q", p)
	}
	sub.Close()
	select {
	case <-ended:
	default:
		t.Fatal("Close returned before handle saw its ctx end")
	}

	srv.Kill()
	waitFor(t, "Up turns false", func() bool { return !c.Up() })
	if _, err := c.Subscribe(c.Key("u"), func(context.Context, string) {}); err == nil || !strings.Contains(err.Error(), "did not confirm the subscription") {
		t.Fatalf("Subscribe with Redis down: %v", err)
	}
}
