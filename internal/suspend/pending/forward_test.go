package pending_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/suspend"
	"github.com/toolnexus/toolnexus/internal/suspend/pending"
	"github.com/toolnexus/toolnexus/internal/suspend/pending/pendingtest"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// twoReplicas are two stores over one shared suspend.Store, joined on a
// Hub (the Remote of replicas in one process; the wire between processes
// is tested in internal/cluster and pkg/server). Closing ha takes a away.
func twoReplicas(t *testing.T) (a, b *pending.Store, ha *pending.HubReplica) {
	t.Helper()
	shared := suspend.NewMemory(nil, 0)
	hub := pending.NewHub()
	a, b = pending.New(shared, pending.Limits{}), pending.New(shared, pending.Limits{})
	ha, hb := hub.Join("a"), hub.Join("b")
	t.Cleanup(ha.Close)
	t.Cleanup(hb.Close)
	if err := a.SetRemote(ha); err != nil {
		t.Fatal(err)
	}
	if err := b.SetRemote(hb); err != nil {
		t.Fatal(err)
	}
	return a, b, ha
}

// The Hub keeps the contract the Redis forwarding keeps.
func TestHubForwardingContract(t *testing.T) {
	pendingtest.RunForwarding(t, func(t *testing.T) pendingtest.Replicas {
		hub := pending.NewHub()
		a, b := hub.Join("a"), hub.Join("b")
		t.Cleanup(a.Close)
		t.Cleanup(b.Close)
		return pendingtest.Replicas{A: a, B: b, CloseB: b.Close}
	})
}

// answerer resumes as a source does: it takes the answer and returns what
// the call does next (here: the answer, said back).
type answerer struct{}

func (answerer) Resume(ctx context.Context, e *pending.Entry, c tool.Call) tool.Result {
	if err := e.Deliver(ctx, *c.Answer); err != nil {
		return tool.Failure(err.Error(), nil)
	}
	return tool.Result{Output: fmt.Sprint("answered: ", c.Answer.Data), Metadata: map[string]any{"by": "owner"}}
}

func TestForwardedAnswerResumesOnTheOwner(t *testing.T) {
	t.Parallel()
	a, b, ha := twoReplicas(t)
	forward := func(c tool.Call) tool.Result {
		return b.Answer(t.Context(), c, pending.Answering{Label: "t"})
	}
	answered := func(c tool.Call, id string, data any) tool.Call {
		c.Answer = &tool.Answer{ID: id, OK: true, Data: data}
		return c
	}

	e, err := a.Open(t.Context(), call("p", "s", `{"x": 1}`), "elicitation", answerer{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, want string
		call       tool.Call
		isError    bool
	}{
		{"another principal learns nothing", pending.ErrUnknown.Error(), answered(call("mallory", "s", `{"x": 1}`), e.ID, "x"), true},
		{"other arguments", pending.ErrMismatch.Error(), answered(call("p", "s", `{"x": 2}`), e.ID, "x"), true},
		{"the answer resumes on the owner", "answered: yes", answered(call("p", "s", `{ "x" : 1 }`), e.ID, "yes"), false},
		{"answered once", pending.ErrUnknown.Error(), answered(call("p", "s", `{"x": 1}`), e.ID, "again"), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := forward(tc.call)
			if r.IsError != tc.isError || !strings.Contains(r.Output, tc.want) {
				t.Fatalf("got %+v, want %q (is_error %v)", r, tc.want, tc.isError)
			}
		})
	}

	t.Run("owner gone", func(t *testing.T) {
		e, err := a.Open(t.Context(), call("p", "s", `{}`), "elicitation", answerer{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Withdraw(t.Context())
		ha.Close()
		r := forward(answered(call("p", "s", `{}`), e.ID, "late"))
		if !r.IsError || !strings.Contains(r.Output, "replica holding this pending request is gone") || !strings.Contains(r.Output, "call the tool again") {
			t.Fatalf("answer to a gone replica: %+v", r)
		}
	})
}

// deadlineSeer says back the deadline the owner resumes under.
type deadlineSeer struct{}

func (deadlineSeer) Resume(ctx context.Context, _ *pending.Entry, _ tool.Call) tool.Result {
	d, ok := ctx.Deadline()
	if !ok {
		return tool.Failure("no deadline", nil)
	}
	return tool.Result{Output: d.UTC().Format(time.RFC3339Nano)}
}

// The owner stops when the caller does: the caller's deadline travels
// with the forwarded answer.
func TestForwardedAnswerKeepsTheCallersDeadline(t *testing.T) {
	t.Parallel()
	a, b, _ := twoReplicas(t)
	e, err := a.Open(t.Context(), call("p", "s", `{}`), "elicitation", deadlineSeer{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Withdraw(t.Context())
	c := call("p", "s", `{}`)
	c.Answer = &tool.Answer{ID: e.ID, OK: true}
	deadline := time.Now().Add(time.Minute)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	r := b.Answer(ctx, c, pending.Answering{Label: "t"})
	if r.IsError || r.Output != deadline.UTC().Format(time.RFC3339Nano) {
		t.Fatalf("owner resumed under %q, want the caller's deadline %v", r.Output, deadline.UTC())
	}
}
