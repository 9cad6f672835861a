package suspendtest

import (
	"context"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/suspend"
)

// pendingCounts: Pending counts the pending entries of one kind, and
// only those: not another kind's, not a resolved, withdrawn or expired
// one.
func pendingCounts(t *testing.T, s suspend.Store) {
	ctx := context.Background()
	want := func(what string, n int) {
		t.Helper()
		if got, err := s.Pending(ctx, suspend.KindApproval); err != nil || got != n {
			t.Fatalf("%s: Pending = %d, %v; want %d", what, got, err, n)
		}
	}
	want("empty", 0)
	a := mustCreate(t, s, req(suspend.KindApproval, "alice"))
	b := mustCreate(t, s, req(suspend.KindApproval, "bob"))
	mustCreate(t, s, req(suspend.KindApproval, "carol"))
	mustCreate(t, s, req(suspend.KindQuestion, "alice"))
	want("three approvals and a question", 3)
	if _, err := s.Resolve(ctx, a.ID, suspend.Resolution{To: suspend.Approved, By: "ops"}); err != nil {
		t.Fatal(err)
	}
	want("one approved", 2)
	if _, err := s.Withdraw(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	want("one withdrawn", 1)
	short := req(suspend.KindApproval, "dave")
	short.TTL = 50 * time.Millisecond
	mustCreate(t, s, short)
	want("a short one", 2)
	time.Sleep(150 * time.Millisecond)
	want("the short one expired", 1)
}
