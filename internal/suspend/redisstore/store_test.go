package redisstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/cluster/clustertest"
	"github.com/toolnexus/toolnexus/internal/suspend"
	"github.com/toolnexus/toolnexus/internal/suspend/redisstore"
	"github.com/toolnexus/toolnexus/internal/suspend/suspendtest"
	"github.com/toolnexus/toolnexus/internal/testutil"
)

// redisStore is a Redis store on its own redis-server, as one replica's.
func redisStore(t *testing.T, srv *testutil.RedisServer) *redisstore.Redis {
	t.Helper()
	s := redisstore.New(clustertest.Client(t, srv, ""))
	t.Cleanup(s.Close)
	return s
}

func TestRedisStoreContract(t *testing.T) {
	suspendtest.Run(t, func(t *testing.T) suspend.Store { return redisStore(t, testutil.StartRedis(t)) })
}

func approvalRequest(max int) suspend.Request {
	return suspend.Request{Kind: suspend.KindApproval, TTL: time.Minute, MaxPerPrincipal: max,
		Binding: suspend.Binding{Principal: "agent", Session: "s", Tool: "write", Digest: "d"}}
}

// Two replicas on one Redis: what one creates the other answers, a
// waiter on one wakes at the other's decision, a claim wins once.
func TestReplicasShareEntries(t *testing.T) {
	srv := testutil.StartRedis(t)
	a, b := redisStore(t, srv), redisStore(t, srv)
	ctx := context.Background()
	e, err := a.Create(ctx, approvalRequest(0))
	if err != nil {
		t.Fatal(err)
	}
	woke := make(chan time.Time, 1)
	go func() {
		if got, err := a.Wait(ctx, e.ID); err != nil || got.State != suspend.Approved {
			t.Errorf("Wait on a: %+v %v", got, err)
		}
		woke <- time.Now()
	}()
	time.Sleep(50 * time.Millisecond) // let the waiter wait
	decided := time.Now()
	if _, err := b.Resolve(ctx, e.ID, suspend.Resolution{To: suspend.Approved, By: "ops"}); err != nil {
		t.Fatal(err)
	}
	select {
	case at := <-woke:
		t.Logf("a's waiter woke %s after b's decision", at.Sub(decided))
	case <-time.After(time.Second): // far past a poll's 2 s would be a lost wake-up; 1 s is the pub/sub path failing
		t.Fatal("a's waiter did not wake within 1 s of b's decision")
	}
	wins := make(chan error, 8)
	for i := range 8 {
		s := []*redisstore.Redis{a, b}[i%2]
		go func() { _, err := s.Claim(ctx, e.ID, e.Binding); wins <- err }()
	}
	won := 0
	for range 8 {
		if err := <-wins; err == nil {
			won++
		} else if !errors.Is(err, suspend.ErrClaimed) {
			t.Errorf("claim: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d claims won across two replicas, want exactly 1", won)
	}
}

func TestCapsCountEveryReplica(t *testing.T) {
	srv := testutil.StartRedis(t)
	a, b := redisStore(t, srv), redisStore(t, srv)
	ctx := context.Background()
	for _, s := range []*redisstore.Redis{a, b} {
		if _, err := s.Create(ctx, approvalRequest(2)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.Create(ctx, approvalRequest(2)); !errors.Is(err, suspend.ErrCapped) {
		t.Fatalf("third pending call over two replicas: %v, want capped", err)
	}
}

// kill -9 Redis: every operation fails closed with a clear error, and
// works again when Redis returns, without a new store.
func TestRedisDownFailsClosedAndRecovers(t *testing.T) {
	srv := testutil.StartRedis(t)
	s := redisStore(t, srv)
	ctx := context.Background()
	e, err := s.Create(ctx, approvalRequest(0))
	if err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	for _, op := range []func() error{
		func() error { _, err := s.Create(ctx, approvalRequest(0)); return err },
		func() error {
			_, err := s.Resolve(ctx, e.ID, suspend.Resolution{To: suspend.Approved, By: "ops"})
			return err
		},
		func() error { _, err := s.Claim(ctx, e.ID, e.Binding); return err },
		func() error { _, err := s.List(ctx, suspend.Filter{}); return err },
	} {
		if err := op(); !errors.Is(err, redisstore.ErrUnavailable) || !strings.Contains(err.Error(), "refused until it is back") {
			t.Fatalf("with Redis down: %v", err)
		}
	}
	srv.Start() // empty: nothing persisted
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := s.Create(ctx, approvalRequest(0))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("never recovered: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
