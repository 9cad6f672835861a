package suspend_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolnexus/toolnexus/internal/suspend"
	"github.com/toolnexus/toolnexus/internal/suspend/suspendtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestMemoryContract(t *testing.T) {
	suspendtest.Run(t, func(*testing.T) suspend.Store { return suspend.NewMemory(nil, 0) })
}

// TestMemoryHistoryBounded: closed entries past the history bound are
// forgotten oldest first, pending ones never.
func TestMemoryHistoryBounded(t *testing.T) {
	ctx := context.Background()
	s := suspend.NewMemory(nil, 2)
	var ids []string
	for i := range 4 {
		e, err := s.Create(ctx, suspend.Request{Kind: suspend.KindQuestion, TTL: time.Minute,
			Binding: suspend.Binding{Principal: "a", Tool: "t", Digest: string(rune('a' + i))}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	for _, id := range ids[:3] {
		if _, err := s.Resolve(ctx, id, suspend.Resolution{To: suspend.Answered, By: "a"}); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range []bool{false, true, true, true} {
		_, err := s.Get(ctx, ids[i])
		if (err == nil) != want {
			t.Fatalf("entry %d held = %v, want %v", i, err == nil, want)
		}
	}
}

// TestMemoryFakeClock: the store's state follows its clock, not a timer.
func TestMemoryFakeClock(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1000, 0)
	s := suspend.NewMemory(func() time.Time { return now }, 0)
	e, err := s.Create(ctx, suspend.Request{Kind: suspend.KindApproval, TTL: time.Hour, Binding: suspend.Binding{Principal: "a", Tool: "t"}})
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Hour)
	if got, _ := s.Get(ctx, e.ID); got.State != suspend.Expired {
		t.Fatalf("at its deadline: %s", got.State)
	}
}
