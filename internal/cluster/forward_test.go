package cluster_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/cluster"
	tu "github.com/toolnexus/toolnexus/internal/testutil"
)

// An answer forwarded to the replica that holds its request comes back
// with that replica's reply; a replica that is not listening (gone) is
// known at once (a killed one is tested with real processes in pkg/server).
func TestForwardReachesTheOwnerAndNoticesItGone(t *testing.T) {
	srv := tu.StartRedis(t)
	cfg := redisConfig(t, srv, "")
	owner, other := newClient(t, cfg, nil, nil), newClient(t, cfg, nil, nil)
	release := make(chan struct{})
	owner.ServeForwards(func(ctx context.Context, req []byte) []byte {
		if string(req) == `"hold"` {
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return append([]byte(`{"echo":`), append(req, '}')...)
	})
	other.ServeForwards(func(context.Context, []byte) []byte { return []byte(`null`) })

	t.Run("reply comes back", func(t *testing.T) {
		got, err := other.Forward(context.Background(), owner.Replica(), []byte(`{"n":1}`))
		if err != nil || string(got) != `{"echo":{"n":1}}` {
			t.Fatalf("forward = %s, %v", got, err)
		}
	})
	t.Run("unknown replica is gone at once", func(t *testing.T) {
		start := time.Now()
		_, err := other.Forward(context.Background(), "no-such-replica", []byte(`1`))
		if !errors.Is(err, cluster.ErrReplicaGone) || time.Since(start) > time.Second {
			t.Fatalf("forward to nobody = %v after %v", err, time.Since(start))
		}
	})
	t.Run("owner closing mid-call still replies", func(t *testing.T) {
		done := make(chan error, 1)
		go func() {
			got, err := other.Forward(context.Background(), owner.Replica(), []byte(`"hold"`))
			if err == nil && string(got) != `{"echo":"hold"}` {
				err = errors.New("reply " + string(got))
			}
			done <- err
		}()
		time.Sleep(100 * time.Millisecond)
		owner.Close() // ends the request it serves, which still replies
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("forward while the owner closed = %v", err)
			}
		case <-time.After(2 * time.Second):
			t.Fatal("the sender still waits 2 s after the owner closed")
		}
		close(release)
	})
}

// BenchmarkForwardRoundTrip is one forwarded answer's round trip over
// loopback Redis (publish, the owner's reply, delivery), the owner's own
// work excluded.
func BenchmarkForwardRoundTrip(b *testing.B) {
	srv := tu.StartRedis(b)
	cfg := redisConfig(b, srv, "")
	owner, other := newClient(b, cfg, nil, nil), newClient(b, cfg, nil, nil)
	owner.ServeForwards(func(_ context.Context, req []byte) []byte { return req })
	other.ServeForwards(func(context.Context, []byte) []byte { return nil })
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
