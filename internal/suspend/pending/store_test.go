package pending_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolnexus/toolnexus/internal/suspend"
	"github.com/toolnexus/toolnexus/internal/suspend/pending"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func call(principal, session, args string) tool.Call {
	return tool.Call{Name: "t", Arguments: json.RawMessage(args), Owner: tool.Owner{Principal: principal, Session: session}}
}

func TestAnswerReachesTheWaiter(t *testing.T) {
	t.Parallel()
	s := pending.NewLocal(pending.Limits{})
	e, err := s.Open(call("a", "s", `{"x": 1}`), "elicitation", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Whitespace in the arguments does not matter; the owner does.
	for _, other := range []tool.Call{call("b", "s", `{"x":1}`), call("a", "other", `{"x":1}`)} {
		if _, err := s.Peek(other, e.ID); !errors.Is(err, pending.ErrUnknown) {
			t.Fatalf("owner %+v: %v", other.Owner, err)
		}
	}
	if _, err := s.Peek(call("a", "s", `{"x":2}`), e.ID); !errors.Is(err, pending.ErrMismatch) {
		t.Fatalf("other arguments: %v", err)
	}
	got, err := s.Peek(call("a", "s", `{"x":1}`), e.ID)
	if err != nil || got != e {
		t.Fatalf("peek: %v", err)
	}
	if err := e.Deliver(tool.Answer{ID: e.ID, OK: true, Data: "yes"}); err != nil {
		t.Fatal(err)
	}
	a, ok := e.Wait(context.Background())
	if !ok || a.Data != "yes" {
		t.Fatalf("wait = %+v %v", a, ok)
	}
	if err := e.Deliver(tool.Answer{}); !errors.Is(err, pending.ErrUnknown) {
		t.Fatalf("second delivery: %v", err)
	}
	if s.Len() != 0 {
		t.Fatalf("len = %d", s.Len())
	}
}

func TestExpiryReleasesTheWaiterAndRefusesLateAnswers(t *testing.T) {
	t.Parallel()
	s := pending.NewLocal(pending.Limits{Timeout: time.Millisecond})
	expired := make(chan struct{})
	e, err := s.Open(call("a", "", `{}`), "sampling", nil, func() { close(expired) })
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := e.Wait(context.Background()); ok {
		t.Fatal("an expired request reported an answer")
	}
	<-expired
	if _, err := s.Peek(call("a", "", `{}`), e.ID); !errors.Is(err, pending.ErrExpired) {
		t.Fatalf("late answer: %v", err)
	}
}

func TestMaxPerPrincipal(t *testing.T) {
	t.Parallel()
	s := pending.NewLocal(pending.Limits{MaxPerPrincipal: 2})
	var open []*pending.Entry
	for range 2 {
		e, err := s.Open(call("a", "", `{}`), "elicitation", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, e)
	}
	if _, err := s.Open(call("a", "", `{}`), "elicitation", nil, nil); !errors.Is(err, pending.ErrTooMany) {
		t.Fatalf("third: %v", err)
	}
	if _, err := s.Open(call("b", "", `{}`), "elicitation", nil, nil); err != nil {
		t.Fatalf("another principal: %v", err)
	}
	// Withdrawn by the upstream: the slot is free again.
	done, cancel := context.WithCancel(context.Background())
	cancel()
	if _, ok := open[0].Wait(done); ok {
		t.Fatal("withdrawn request reported an answer")
	}
	if _, err := s.Open(call("a", "", `{}`), "elicitation", nil, nil); err != nil {
		t.Fatalf("after a withdrawal: %v", err)
	}
}

// A withdrawn request is gone: no expiry runs, and an answer is told the
// id is unknown (not expired).
func TestWithdraw(t *testing.T) {
	t.Parallel()
	s := pending.NewLocal(pending.Limits{Timeout: time.Hour})
	c := call("a", "s", `{}`)
	e, err := s.Open(c, "input", nil, func() { t.Error("expired after withdraw") })
	if err != nil {
		t.Fatal(err)
	}
	if !e.Withdraw() || e.Withdraw() {
		t.Fatal("Withdraw must report true once, then false")
	}
	if _, err := s.Peek(c, e.ID); !errors.Is(err, pending.ErrUnknown) {
		t.Fatalf("peek after withdraw: %v", err)
	}
	if err := e.Deliver(tool.Answer{OK: true}); !errors.Is(err, pending.ErrExpired) || s.Len() != 0 {
		t.Fatalf("deliver after withdraw: %v (open %d)", err, s.Len())
	}
}

// TestAnswerWithReorderedKeys: the arguments of an answer are compared by
// their canonical digest, as an approval's are, so the same arguments in
// another key order resume the call.
func TestAnswerWithReorderedKeys(t *testing.T) {
	t.Parallel()
	s := pending.NewLocal(pending.Limits{})
	e, err := s.Open(call("a", "s", `{"a": 1, "b": {"c": 2, "d": 3}}`), "elicitation", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Peek(call("a", "s", `{"b":{"d":3,"c":2},"a":1}`), e.ID); err != nil {
		t.Fatalf("reordered keys: %v", err)
	}
	e.Withdraw()
}

// Two replicas sharing one suspended-call store: an answer to a request
// the other replica holds is refused at once, saying so — never a wait.
func TestAnswerOnAnotherReplicaSaysWhere(t *testing.T) {
	t.Parallel()
	shared := suspend.NewMemory(nil, 0)
	a, b := pending.New(shared, pending.Limits{}), pending.New(shared, pending.Limits{})
	e, err := a.Open(call("p", "s", `{"x": 1}`), "elicitation", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Peek(call("p", "s", `{"x": 1}`), e.ID); !errors.Is(err, pending.ErrElsewhere) {
		t.Fatalf("answer on the other replica: %v", err)
	}
	if _, err := b.Peek(call("intruder", "s", `{"x": 1}`), e.ID); !errors.Is(err, pending.ErrUnknown) {
		t.Fatalf("another principal learns of it: %v", err)
	}
	e.Withdraw()
}
