package approval_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolnexus/toolnexus/internal/approval"
	"github.com/toolnexus/toolnexus/internal/suspend"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// clock is a settable time source, so expiry needs no sleeping.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func newStore(max int) (*approval.Store, *clock) {
	c := &clock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	return approval.New(suspend.NewMemory(c.Now, max), approval.Limits{MaxPerPrincipal: max, Timeout: time.Minute}), c
}

var (
	ctx = context.Background()
	req = approval.Request{Binding: suspend.Binding{Tool: "write", Principal: "agent-a", Digest: "d1"}, Policy: "p"}
)

// reqN is req with arguments of its own: a different call.
func reqN(n int) approval.Request {
	r := req
	r.Digest = fmt.Sprint("d", n)
	return r
}

// redeem redeems id as agent-a's write with the given digest.
func redeem(s *approval.Store, id, who, tool, digest string) (approval.Entry, error) {
	return s.Redeem(ctx, id, suspend.Binding{Principal: who, Tool: tool, Digest: digest})
}

func TestApproveRedeemOnce(t *testing.T) {
	t.Parallel()
	s, _ := newStore(10)
	e, err := s.Create(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := redeem(s, e.ID, "agent-a", "write", "d1"); !errors.Is(err, approval.ErrNotYet) {
		t.Fatalf("before a decision: %v", err)
	}
	if _, err := s.Decide(ctx, e.ID, "agent-a", true, ""); !errors.Is(err, approval.ErrSelf) {
		t.Fatalf("self approval: %v", err)
	}
	if _, err := s.Decide(ctx, e.ID, "ops", true, "fine"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Decide(ctx, e.ID, "ops", false, ""); !errors.Is(err, approval.ErrDecided) {
		t.Fatalf("second decision: %v", err)
	}
	for _, c := range []struct {
		who, tool, digest string
		want              error
	}{
		{"agent-b", "write", "d1", approval.ErrOtherCaller},
		{"agent-a", "bash", "d1", approval.ErrOtherTool},
		{"agent-a", "write", "d2", approval.ErrOtherArgs},
	} {
		if _, err := redeem(s, e.ID, c.who, c.tool, c.digest); !errors.Is(err, c.want) {
			t.Errorf("%+v: %v", c, err)
		}
	}
	if got, err := redeem(s, e.ID, "agent-a", "write", "d1"); err != nil || got.Status != approval.Used || got.DecidedBy != "ops" {
		t.Fatalf("redeem: %+v %v", got, err)
	}
	if _, err := redeem(s, e.ID, "agent-a", "write", "d1"); !errors.Is(err, approval.ErrUsed) {
		t.Fatalf("replay: %v", err)
	}
}

func TestDeniedAndExpired(t *testing.T) {
	t.Parallel()
	s, c := newStore(10)
	d, _ := s.Create(ctx, req)
	if _, err := s.Decide(ctx, d.ID, "ops", false, "no"); err != nil {
		t.Fatal(err)
	}
	if _, err := redeem(s, d.ID, "agent-a", "write", "d1"); !errors.Is(err, approval.ErrDeniedCall) {
		t.Fatalf("denied: %v", err)
	}
	pend, _ := s.Create(ctx, reqN(2))
	approved, _ := s.Create(ctx, reqN(3))
	if _, err := s.Decide(ctx, approved.ID, "ops", true, ""); err != nil {
		t.Fatal(err)
	}
	c.Add(time.Minute)
	if _, err := s.Decide(ctx, pend.ID, "ops", true, ""); !errors.Is(err, approval.ErrExpired) {
		t.Fatalf("decide after expiry: %v", err)
	}
	if _, err := redeem(s, approved.ID, "agent-a", "write", "d3"); !errors.Is(err, approval.ErrExpired) {
		t.Fatalf("use after expiry: %v", err)
	}
	if _, err := redeem(s, "apr_NOPE", "agent-a", "write", "d1"); !errors.Is(err, approval.ErrUnknown) {
		t.Fatalf("unknown: %v", err)
	}
	held := list(t, s)
	if len(held) != 3 || held[0].Status != approval.Expired {
		t.Fatalf("list: %+v", held)
	}
}

func TestBounded(t *testing.T) {
	t.Parallel()
	s, _ := newStore(2)
	a, _ := s.Create(ctx, reqN(1))
	b, err := s.Create(ctx, reqN(2))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, reqN(3)); !errors.Is(err, approval.ErrFull) {
		t.Fatalf("past maxPending: %v", err)
	}
	if _, err := s.Decide(ctx, a.ID, "ops", false, ""); err != nil {
		t.Fatal(err)
	}
	c, err := s.Create(ctx, reqN(4))
	if err != nil {
		t.Fatalf("a decided approval frees its slot: %v", err)
	}
	for _, e := range []approval.Entry{b, c} {
		if _, err := s.Decide(ctx, e.ID, "ops", false, ""); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 10 {
		e, err := s.Create(ctx, reqN(10+i))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Decide(ctx, e.ID, "ops", true, ""); err != nil {
			t.Fatal(err)
		}
		// Used, it is history (an approved, unused one stays usable
		// until its timeout).
		if _, err := redeem(s, e.ID, "agent-a", "write", e.Digest); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(list(t, s)); n > 4 {
		t.Fatalf("history not bounded: %d entries", n)
	}
}

func TestWaitWakesOnDecision(t *testing.T) {
	t.Parallel()
	s, _ := newStore(10)
	e, _ := s.Create(ctx, req)
	got := make(chan approval.Entry, 1)
	go func() {
		w, _ := s.Wait(context.Background(), e.ID)
		got <- w
	}()
	if _, err := s.Decide(ctx, e.ID, "ops", true, ""); err != nil {
		t.Fatal(err)
	}
	if w := <-got; w.Status != approval.Approved {
		t.Fatalf("%+v", w)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	e2, _ := s.Create(ctx, reqN(2))
	if _, err := s.Wait(ctx, e2.ID); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled wait: %v", err)
	}
}

func list(t *testing.T, s *approval.Store) []approval.Entry {
	t.Helper()
	l, err := s.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestIdenticalCallReusesItsApproval: a retry of the same call (principal,
// session, tool, arguments) gets the approval already waiting, so retries
// do not fill policy.maxPending; a call in another session gets its own.
func TestIdenticalCallReusesItsApproval(t *testing.T) {
	t.Parallel()
	s, _ := newStore(1)
	first, err := s.Create(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.Create(ctx, req)
	if err != nil || again.ID != first.ID || !again.Reused {
		t.Fatalf("retry: %+v, %v; want %s reused", again, err, first.ID)
	}
	other := req
	other.Session = "s2"
	if _, err := s.Create(ctx, other); !errors.Is(err, approval.ErrFull) {
		t.Fatalf("another session's call is another approval, over the cap of 1: %v", err)
	}
}

// TestMaxPendingPerPrincipal: one principal's pending approvals do not
// block another's; the total cap bounds them all.
func TestMaxPendingPerPrincipal(t *testing.T) {
	t.Parallel()
	s := approval.New(suspend.NewMemory(nil, 0), approval.Limits{MaxPerPrincipal: 2, MaxTotal: 3, Timeout: time.Minute})
	for i := range 2 {
		if _, err := s.Create(ctx, reqN(i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Create(ctx, reqN(9)); !errors.Is(err, approval.ErrFull) {
		t.Fatalf("agent-a's third: %v", err)
	}
	b := reqN(1)
	b.Principal = "agent-b"
	if _, err := s.Create(ctx, b); err != nil {
		t.Fatalf("agent-b blocked by agent-a: %v", err)
	}
	c := reqN(1)
	c.Principal = "agent-c"
	if _, err := s.Create(ctx, c); !errors.Is(err, approval.ErrFull) || !strings.Contains(err.Error(), "for all callers") {
		t.Fatalf("past maxPendingTotal: %v", err)
	}
}

// TestRedeemBoundToSession: an approval asked in one session is not
// redeemed from another session of the same principal.
func TestRedeemBoundToSession(t *testing.T) {
	t.Parallel()
	s, _ := newStore(10)
	r := req
	r.Session = "s1"
	e, _ := s.Create(ctx, r)
	if _, err := s.Decide(ctx, e.ID, "ops", true, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Redeem(ctx, e.ID, suspend.Binding{Principal: "agent-a", Session: "s2", Tool: "write", Digest: "d1"}); !errors.Is(err, approval.ErrOtherSess) {
		t.Fatalf("from another session: %v", err)
	}
	if got, err := s.Redeem(ctx, e.ID, r.Binding); err != nil || got.Session != "s1" {
		t.Fatalf("from its session: %+v, %v", got, err)
	}
}

// TestOnlyApprovalIDs: the approval layer does not decide or redeem
// another kind of suspended call held in the same store.
func TestOnlyApprovalIDs(t *testing.T) {
	t.Parallel()
	mem := suspend.NewMemory(nil, 0)
	s := approval.New(mem, approval.Limits{MaxPerPrincipal: 5, Timeout: time.Minute})
	q, err := mem.Create(ctx, suspend.Request{Kind: suspend.KindElicitation, Binding: req.Binding, TTL: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if approval.Owns(q.ID) {
		t.Fatalf("Owns(%s)", q.ID)
	}
	if _, err := s.Decide(ctx, q.ID, "ops", true, ""); !errors.Is(err, approval.ErrUnknown) {
		t.Fatalf("deciding an elicitation: %v", err)
	}
	if l := list(t, s); len(l) != 0 {
		t.Fatalf("approvals listed an elicitation: %+v", l)
	}
}

// The policy's reason and the summary travel with the approval to whoever
// lists it.
func TestPolicyReasonListed(t *testing.T) {
	t.Parallel()
	s, _ := newStore(10)
	r := req
	r.Summary, r.PolicyReason = `{"command":"deploy"}`, "a human reads every deploy first"
	if _, err := s.Create(ctx, r); err != nil {
		t.Fatal(err)
	}
	list, err := s.List(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("%v %v", list, err)
	}
	if got := list[0]; got.PolicyReason != r.PolicyReason || got.Summary != r.Summary || got.Policy != "p" {
		t.Fatalf("listed %+v", got)
	}
}
