package suspendtest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/suspend"
)

// Outage takes a store's backend away (Down: a paused or stopped
// redis-server) and brings it back (Up).
type Outage struct{ Down, Up func() }

// RunUnavailable is the part of the contract only a store that lives
// across the network can be held to (the in-memory store is never
// unavailable): while its backend cannot be reached every method fails
// with an error wrapping suspend.ErrUnavailable — never ErrUnknown or
// ErrExpired, which would tell a caller to start over — except Wait,
// which rides the outage out until its context ends; once the backend is
// back the entries made before are there and answerable, and a wait that
// began before the outage wakes at their answer. newStore returns
// an empty store and the outage of its own backend.
func RunUnavailable(t *testing.T, newStore func(t *testing.T) (suspend.Store, Outage)) {
	t.Helper()
	s, out := newStore(t)
	ctx := context.Background()
	q := mustCreate(t, s, req(suspend.KindQuestion, "alice"))
	a := mustCreate(t, s, req(suspend.KindApproval, "alice"))
	if _, err := s.Resolve(ctx, a.ID, suspend.Resolution{To: suspend.Approved, By: "bob"}); err != nil {
		t.Fatal(err)
	}
	// A wait that began before the outage rides it out and wakes at the
	// answer given after it.
	woke := make(chan error, 1)
	go func() {
		got, err := s.Wait(ctx, q.ID)
		if err == nil && got.State != suspend.Answered {
			err = fmt.Errorf("woke in state %s, want answered", got.State)
		}
		woke <- err
	}()
	time.Sleep(50 * time.Millisecond) // let it wait
	out.Down()
	up := false
	defer func() {
		if !up {
			out.Up()
		}
	}()
	b := bind("alice")
	for _, c := range []struct {
		name string
		op   func(context.Context) error
	}{
		{"Get", func(ctx context.Context) error { _, err := s.Get(ctx, q.ID); return err }},
		{"Resolve", func(ctx context.Context) error {
			_, err := s.Resolve(ctx, q.ID, suspend.Resolution{To: suspend.Answered, By: "alice", Answer: []byte(`"x"`), Require: &b})
			return err
		}},
		{"Claim", func(ctx context.Context) error { _, err := s.Claim(ctx, a.ID, b); return err }},
		{"Create", func(ctx context.Context) error {
			_, err := s.Create(ctx, req(suspend.KindQuestion, "carol"))
			return err
		}},
		{"List", func(ctx context.Context) error { _, err := s.List(ctx, suspend.Filter{}); return err }},
		{"Withdraw", func(ctx context.Context) error { _, err := s.Withdraw(ctx, q.ID); return err }},
		{"Lookup", func(ctx context.Context) error { _, err := s.Lookup(ctx, suspend.KindApproval, b); return err }},
		{"Pending", func(ctx context.Context) error { _, err := s.Pending(ctx, suspend.KindQuestion); return err }},
		{"Create reusing", func(ctx context.Context) error {
			r := req(suspend.KindQuestion, "alice")
			r.Reuse = true
			_, err := s.Create(ctx, r)
			return err
		}},
	} {
		// A caller's deadline far beyond the store's own bound: the store
		// must say it is unavailable, not hold the call until the caller
		// gives up.
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err := c.op(cctx)
		cancel()
		if !errors.Is(err, suspend.ErrUnavailable) || errors.Is(err, suspend.ErrUnknown) || errors.Is(err, suspend.ErrExpired) {
			t.Fatalf("%s while the store is unavailable: %v, want an error wrapping ErrUnavailable", c.name, err)
		}
	}
	// A wait during the outage ends with its context (or, past the
	// entry's deadline, with ErrUnavailable), never as unknown or expired.
	wctx, cancel := context.WithTimeout(ctx, time.Second)
	_, err := s.Wait(wctx, q.ID)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, suspend.ErrUnavailable) {
		t.Fatalf("Wait while the store is unavailable: %v, want its context's end or ErrUnavailable", err)
	}
	out.Up()
	up = true
	deadline := time.Now().Add(15 * time.Second)
	for {
		got, err := s.Get(ctx, q.ID)
		if err == nil {
			if got.State != suspend.Pending {
				t.Fatalf("after the outage the question is %s, want pending", got.State)
			}
			break
		}
		if !errors.Is(err, suspend.ErrUnavailable) || time.Now().After(deadline) {
			t.Fatalf("Get after the outage: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := s.Resolve(ctx, q.ID, suspend.Resolution{To: suspend.Answered, By: "alice", Answer: []byte(`"x"`), Require: &b}); err != nil {
		t.Fatalf("answering after the outage: %v", err)
	}
	select {
	case err := <-woke:
		if err != nil {
			t.Fatalf("the wait that began before the outage: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the wait that began before the outage did not wake at the answer")
	}
	if _, err := s.Claim(ctx, a.ID, b); err != nil {
		t.Fatalf("claiming the approval after the outage: %v", err)
	}
}
