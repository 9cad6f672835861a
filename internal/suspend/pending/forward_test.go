package pending_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/suspend"
	"github.com/toolnexus/toolnexus/internal/suspend/pending"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// replicas is a Remote between stores in one process: what the control
// plane carries between processes, carried by a function call (the wire
// is tested in internal/cluster and pkg/server).
type replicas map[string]*pending.Store

type remote struct {
	id  string
	all replicas
}

func (r remote) Replica() string { return r.id }

func (r remote) Forward(ctx context.Context, owner string, req []byte) ([]byte, error) {
	s, ok := r.all[owner]
	if !ok {
		return nil, fmt.Errorf("%w: %s does not listen", pending.ErrOwnerGone, owner)
	}
	return s.ServeForwarded(ctx, req), nil
}

// answerer resumes as a source does: it takes the answer and returns what
// the call does next (here: the answer, said back).
type answerer struct{}

func (answerer) Resume(_ context.Context, e *pending.Entry, c tool.Call) tool.Result {
	if err := e.Deliver(*c.Answer); err != nil {
		return tool.Failure(err.Error(), nil)
	}
	return tool.Result{Output: fmt.Sprint("answered: ", c.Answer.Data), Metadata: map[string]any{"by": "owner"}}
}

func TestForwardedAnswerResumesOnTheOwner(t *testing.T) {
	t.Parallel()
	shared := suspend.NewMemory(nil, 0)
	all := replicas{}
	a, b := pending.New(shared, pending.Limits{}), pending.New(shared, pending.Limits{})
	all["a"], all["b"] = a, b
	a.SetRemote(remote{"a", all})
	b.SetRemote(remote{"b", all})
	forward := func(c tool.Call) tool.Result {
		return b.Answer(context.Background(), c, pending.Answering{Label: "t"})
	}
	answered := func(c tool.Call, id string, data any) tool.Call {
		c.Answer = &tool.Answer{ID: id, OK: true, Data: data}
		return c
	}

	e, err := a.Open(call("p", "s", `{"x": 1}`), "elicitation", answerer{}, nil)
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
		e, err := a.Open(call("p", "s", `{}`), "elicitation", answerer{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Withdraw()
		delete(all, "a")
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
	shared := suspend.NewMemory(nil, 0)
	all := replicas{}
	a, b := pending.New(shared, pending.Limits{}), pending.New(shared, pending.Limits{})
	all["a"], all["b"] = a, b
	a.SetRemote(remote{"a", all})
	b.SetRemote(remote{"b", all})
	e, err := a.Open(call("p", "s", `{}`), "elicitation", deadlineSeer{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Withdraw()
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
