package approval_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolnexus/toolnexus/internal/approval"
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
	return approval.New(max, time.Minute, c.Now), c
}

var req = approval.Request{Tool: "write", Principal: "agent-a", Digest: "d1", Policy: "p"}

func TestApproveRedeemOnce(t *testing.T) {
	t.Parallel()
	s, _ := newStore(10)
	e, err := s.Create(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Redeem(e.ID, "agent-a", "write", "d1"); !errors.Is(err, approval.ErrNotYet) {
		t.Fatalf("before a decision: %v", err)
	}
	if _, err := s.Decide(e.ID, "agent-a", true, ""); !errors.Is(err, approval.ErrSelf) {
		t.Fatalf("self approval: %v", err)
	}
	if _, err := s.Decide(e.ID, "ops", true, "fine"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Decide(e.ID, "ops", false, ""); !errors.Is(err, approval.ErrDecided) {
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
		if _, err := s.Redeem(e.ID, c.who, c.tool, c.digest); !errors.Is(err, c.want) {
			t.Errorf("%+v: %v", c, err)
		}
	}
	if got, err := s.Redeem(e.ID, "agent-a", "write", "d1"); err != nil || got.Status != approval.Used || got.DecidedBy != "ops" {
		t.Fatalf("redeem: %+v %v", got, err)
	}
	if _, err := s.Redeem(e.ID, "agent-a", "write", "d1"); !errors.Is(err, approval.ErrUsed) {
		t.Fatalf("replay: %v", err)
	}
}

func TestDeniedAndExpired(t *testing.T) {
	t.Parallel()
	s, c := newStore(10)
	d, _ := s.Create(req)
	if _, err := s.Decide(d.ID, "ops", false, "no"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Redeem(d.ID, "agent-a", "write", "d1"); !errors.Is(err, approval.ErrDeniedCall) {
		t.Fatalf("denied: %v", err)
	}
	pend, _ := s.Create(req)
	approved, _ := s.Create(req)
	if _, err := s.Decide(approved.ID, "ops", true, ""); err != nil {
		t.Fatal(err)
	}
	c.Add(time.Minute)
	if _, err := s.Decide(pend.ID, "ops", true, ""); !errors.Is(err, approval.ErrExpired) {
		t.Fatalf("decide after expiry: %v", err)
	}
	if _, err := s.Redeem(approved.ID, "agent-a", "write", "d1"); !errors.Is(err, approval.ErrExpired) {
		t.Fatalf("use after expiry: %v", err)
	}
	if _, err := s.Redeem("apr_NOPE", "agent-a", "write", "d1"); !errors.Is(err, approval.ErrUnknown) {
		t.Fatalf("unknown: %v", err)
	}
	list := s.List()
	if len(list) != 3 || list[0].Status != approval.Expired {
		t.Fatalf("list: %+v", list)
	}
}

func TestBounded(t *testing.T) {
	t.Parallel()
	s, _ := newStore(2)
	a, _ := s.Create(req)
	b, err := s.Create(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(req); !errors.Is(err, approval.ErrFull) {
		t.Fatalf("past maxPending: %v", err)
	}
	if _, err := s.Decide(a.ID, "ops", false, ""); err != nil {
		t.Fatal(err)
	}
	c, err := s.Create(req)
	if err != nil {
		t.Fatalf("a decided approval frees its slot: %v", err)
	}
	for _, e := range []approval.Entry{b, c} {
		if _, err := s.Decide(e.ID, "ops", false, ""); err != nil {
			t.Fatal(err)
		}
	}
	for range 10 {
		e, err := s.Create(req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Decide(e.ID, "ops", true, ""); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(s.List()); n > 4 {
		t.Fatalf("history not bounded: %d entries", n)
	}
}

func TestWaitWakesOnDecision(t *testing.T) {
	t.Parallel()
	s, _ := newStore(10)
	e, _ := s.Create(req)
	got := make(chan approval.Entry, 1)
	go func() {
		w, _ := s.Wait(context.Background(), e.ID)
		got <- w
	}()
	if _, err := s.Decide(e.ID, "ops", true, ""); err != nil {
		t.Fatal(err)
	}
	if w := <-got; w.Status != approval.Approved {
		t.Fatalf("%+v", w)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	e2, _ := s.Create(req)
	if _, err := s.Wait(ctx, e2.ID); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled wait: %v", err)
	}
}

func TestCanonical(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{`{ "b" : 1, "a" : [true, null, "x<y"] }`, `{"a":[true,null,"x<y"],"b":1}`},
		{`{"n": 1.50, "e": 1E3}`, `{"e":1E3,"n":1.50}`},
		{``, `{}`},
		{`{"s":"\u00e9\n"}`, "{\"s\":\"\u00e9\\n\"}"},
	} {
		got, err := approval.Canonical([]byte(c.in))
		if err != nil || string(got) != c.want {
			t.Errorf("%s: %s %v, want %s", c.in, got, err, c.want)
		}
	}
	a, _ := approval.Digest([]byte(`{"a":1,"b":2}`))
	b, _ := approval.Digest([]byte("{\n \"b\": 2, \"a\": 1}"))
	c, _ := approval.Digest([]byte(`{"a":1.0,"b":2}`))
	if a != b || a == c {
		t.Fatalf("digests: %s %s %s", a, b, c)
	}
}
