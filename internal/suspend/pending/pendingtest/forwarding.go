// Package pendingtest is the contract every pending.Remote passes, the
// way answers travel between replicas: run it from the implementation's
// own tests.
package pendingtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/suspend/pending"
)

// Replicas are two replicas' Remotes, neither serving yet, and how the
// second one leaves (its Close).
type Replicas struct {
	A, B   pending.Remote
	CloseB func()
}

// RunForwarding runs the contract; each subtest gets two fresh replicas
// from newReplicas.
func RunForwarding(t *testing.T, newReplicas func(t *testing.T) Replicas) {
	t.Helper()
	for _, c := range []struct {
		name string
		run  func(*testing.T, Replicas)
	}{
		{"ReplyComesBack", replyComesBack},
		{"ConcurrentForwardsGetTheirOwnReplies", concurrentForwards},
		{"NobodyListeningIsGoneAtOnce", nobodyListening},
		{"LeftReplicaIsGone", leftReplica},
		{"OwnerLeavingMidCallEndsItsServeAndStillReplies", ownerLeaving},
		{"CallerContextEndsTheWait", callerContext},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, newReplicas(t)) })
	}
}

// serve starts both replicas: B answers with serveB, A refuses (it only
// forwards).
func serve(t *testing.T, r Replicas, serveB func(ctx context.Context, req []byte) []byte) {
	t.Helper()
	if err := r.A.ServeForwards(func(context.Context, []byte) []byte { return []byte(`"A serves nothing"`) }); err != nil {
		t.Fatalf("A.ServeForwards: %v", err)
	}
	if err := r.B.ServeForwards(serveB); err != nil {
		t.Fatalf("B.ServeForwards: %v", err)
	}
}

func echo(_ context.Context, req []byte) []byte {
	return append(append([]byte(`{"echo":`), req...), '}')
}

func replyComesBack(t *testing.T, r Replicas) {
	serve(t, r, echo)
	if r.A.Replica() == r.B.Replica() || r.A.Replica() == "" {
		t.Fatalf("replica ids %q and %q", r.A.Replica(), r.B.Replica())
	}
	got, err := r.A.Forward(context.Background(), r.B.Replica(), []byte(`{"n":1}`))
	if err != nil || string(got) != `{"echo":{"n":1}}` {
		t.Fatalf("Forward = %s, %v", got, err)
	}
}

func concurrentForwards(t *testing.T, r Replicas) {
	serve(t, r, func(ctx context.Context, req []byte) []byte {
		time.Sleep(10 * time.Millisecond) // overlap them
		return echo(ctx, req)
	})
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			req := fmt.Sprintf(`%d`, i)
			got, err := r.A.Forward(context.Background(), r.B.Replica(), []byte(req))
			if want := `{"echo":` + req + `}`; err != nil || string(got) != want {
				t.Errorf("Forward %d = %s, %v; want %s", i, got, err, want)
			}
		})
	}
	wg.Wait()
}

func wantGone(t *testing.T, what string, err error, start time.Time, within time.Duration) {
	t.Helper()
	if !errors.Is(err, pending.ErrOwnerGone) {
		t.Fatalf("%s: %v, want an error wrapping ErrOwnerGone", what, err)
	}
	if took := time.Since(start); took > within {
		t.Fatalf("%s: known after %v, want within %v", what, took, within)
	}
}

func nobodyListening(t *testing.T, r Replicas) {
	serve(t, r, echo)
	start := time.Now()
	_, err := r.A.Forward(context.Background(), "no-such-replica", []byte(`1`))
	wantGone(t, "Forward to a replica nobody runs", err, start, time.Second)
}

func leftReplica(t *testing.T, r Replicas) {
	serve(t, r, echo)
	r.CloseB()
	start := time.Now()
	_, err := r.A.Forward(context.Background(), r.B.Replica(), []byte(`1`))
	wantGone(t, "Forward to a replica that left", err, start, time.Second)
}

func ownerLeaving(t *testing.T, r Replicas) {
	started := make(chan struct{})
	ended := make(chan struct{})
	serve(t, r, func(ctx context.Context, req []byte) []byte {
		close(started)
		<-ctx.Done() // the leaving replica ends what it serves
		close(ended)
		return []byte(`"ended"`)
	})
	done := make(chan error, 1)
	go func() {
		got, err := r.A.Forward(context.Background(), r.B.Replica(), []byte(`"hold"`))
		if err == nil && string(got) != `"ended"` {
			err = errors.New("reply " + string(got))
		}
		done <- err
	}()
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("B never served the forwarded request")
	}
	r.CloseB()
	select {
	case <-ended:
	default:
		t.Fatal("B left while still serving: its Close must end and wait for what it serves")
	}
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, pending.ErrOwnerGone) {
			t.Fatalf("Forward while the owner left = %v, want its reply or ErrOwnerGone", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the sender still waits 3 s after the owner left")
	}
}

func callerContext(t *testing.T, r Replicas) {
	release := make(chan struct{})
	defer close(release)
	serve(t, r, func(ctx context.Context, _ []byte) []byte {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return []byte(`null`)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := r.A.Forward(ctx, r.B.Replica(), []byte(`1`))
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Fatalf("Forward past the caller's deadline = %v after %v", err, time.Since(start))
	}
}
