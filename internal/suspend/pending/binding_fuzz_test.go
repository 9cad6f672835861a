package pending_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/approval"
	"github.com/toolnexus/toolnexus/internal/suspend"
	"github.com/toolnexus/toolnexus/internal/suspend/pending"
	"github.com/toolnexus/toolnexus/internal/suspend/suspendtest"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/builtin"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// suspendedKind is one way a call suspends, through the API its owner
// uses: suspend makes the suspended entry for call c; the resume it
// returns tries to resume that entry with call r and reports whether r
// was accepted (a refusal must leave the entry for its owner).
type suspendedKind struct {
	name     string
	question bool // the call is the builtin question tool's
	suspend  func(t *testing.T, c tool.Call) (resume func(r tool.Call) bool)
}

// said resumes as the opener's own code does: it takes the answer.
type said struct{}

func (said) Resume(ctx context.Context, e *pending.Entry, c tool.Call) tool.Result {
	if err := e.Deliver(ctx, *c.Answer); err != nil {
		return tool.Failure(err.Error(), nil)
	}
	return tool.Success("resumed", nil)
}

func restoreSaid(*pending.Entry) (pending.Resumer, error) { return said{}, nil }

// answered is c carrying an answer to id.
func answered(c tool.Call, id string) tool.Call {
	c.Answer = &tool.Answer{ID: id, OK: true, Data: "yes"}
	return c
}

// everyKind is every suspended kind over one shared store, as two
// replicas see it (a and b: a portable entry is resumed by the other).
func everyKind(f *testing.F) []suspendedKind {
	ctx := context.Background()
	shared := suspend.NewMemory(nil, 0)
	lim := pending.Limits{MaxPerPrincipal: 1 << 30}
	a, b := pending.New(shared, lim), pending.New(shared, lim)
	approvals := approval.New(shared, approval.Limits{Timeout: time.Minute})
	tools, err := builtin.Tools(builtin.Config{Enabled: true}, sources.Env{Workspace: f.TempDir(), Pending: a})
	if err != nil {
		f.Fatal(err)
	}
	var question tool.Tool
	for _, tl := range tools {
		if tl.Name == "question" {
			question = tl
		}
	}
	bind := func(c tool.Call) suspend.Binding {
		bd, _ := suspend.Bind(c.Owner.Principal, c.Owner.Session, c.Name, c.Arguments)
		return bd
	}
	live := func(kind string) func(*testing.T, tool.Call) func(tool.Call) bool {
		return func(t *testing.T, c tool.Call) func(tool.Call) bool {
			e, err := a.Open(ctx, c, kind, said{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			return func(r tool.Call) bool {
				return !a.Answer(ctx, answered(r, e.ID), pending.Answering{Label: kind}).IsError
			}
		}
	}
	portable := func(kind string) func(*testing.T, tool.Call) func(tool.Call) bool {
		return func(t *testing.T, c tool.Call) func(tool.Call) bool {
			e, err := a.OpenPortable(ctx, c, kind, []byte(`{"upstream":"state"}`), false)
			if err != nil {
				t.Fatal(err)
			}
			return func(r tool.Call) bool {
				return !b.Answer(ctx, answered(r, e.ID), pending.Answering{Label: "rt", Restore: restoreSaid}).IsError
			}
		}
	}
	return []suspendedKind{
		{name: "approval", suspend: func(t *testing.T, c tool.Call) func(tool.Call) bool {
			e, err := approvals.Create(ctx, approval.Request{Binding: bind(c), Policy: "p"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := approvals.Decide(ctx, e.ID, "ops", true, ""); err != nil {
				t.Fatal(err)
			}
			return func(r tool.Call) bool { _, err := approvals.Redeem(ctx, e.ID, bind(r)); return err == nil }
		}},
		{name: "elicitation (a live connection's)", suspend: live("elicitation")},
		{name: "sampling (a live connection's)", suspend: live("sampling")},
		{name: "input (an A2A task's)", suspend: live("input")},
		{name: "elicitation (a 2026-07-28 round trip, resumed on another replica)", suspend: portable("elicitation")},
		{name: "roots (a 2026-07-28 round trip, resumed on another replica)", suspend: portable("roots")},
		{name: "question", question: true, suspend: func(t *testing.T, c tool.Call) func(tool.Call) bool {
			res := question.Execute(ctx, c)
			if res.Pending == nil {
				t.Fatalf("question did not suspend: %+v", res)
			}
			return func(r tool.Call) bool { return !question.Execute(ctx, answered(r, res.Pending.ID)).IsError }
		}},
		{name: "run (a suspended run_code script, as the core binds and takes it)", suspend: func(t *testing.T, c tool.Call) func(tool.Call) bool {
			e, err := shared.Create(ctx, suspend.Request{Kind: suspend.KindRun, Binding: bind(c), TTL: time.Minute, Data: []byte(`{}`)})
			if err != nil {
				t.Fatal(err)
			}
			return func(r tool.Call) bool {
				held, err := shared.Lookup(ctx, suspend.KindRun, bind(r))
				if err != nil || held.ID != e.ID {
					return false
				}
				want := bind(r)
				_, err = shared.Resolve(ctx, held.ID, suspend.Resolution{To: suspend.Answered, By: r.Owner.Principal, Require: &want})
				return err == nil
			}
		}},
	}
}

// FuzzEverySuspendedKindBinding: for every suspended kind, the call that
// suspended resumes it with its arguments' keys in any order and any
// spacing, and another principal, session, tool or argument is refused
// (leaving the entry to its owner).
//
//	go test -run '^$' -fuzz FuzzEverySuspendedKindBinding -fuzztime 30s ./internal/suspend/pending/
func FuzzEverySuspendedKindBinding(f *testing.F) {
	for _, s := range []struct{ args, q, h string }{
		{`{"a":1,"b":2}`, "Which color?", "Color"},
		{`{"command":"rm -rf /","cwd":"/tmp","env":{"B":"2","A":"1"}}`, "Proceed?", ""},
		{`{"x":{"b":[1,{"d":1,"c":2}],"a":null},"n":1.50,"e":-1E+3}`, "\u2028<>", "h\u00e9"},
		{`{}`, "q", "h"},
	} {
		f.Add([]byte(s.args), s.q, s.h)
	}
	kinds := everyKind(f)
	f.Fuzz(func(t *testing.T, args []byte, q, h string) {
		var obj map[string]any
		if _, err := suspend.Digest(args); err != nil || json.Unmarshal(args, &obj) != nil || obj == nil {
			return // not one JSON object: no call is made with it
		}
		qargs, _ := json.Marshal(map[string]any{"questions": []any{map[string]any{"question": q + "?", "header": h}}})
		for _, k := range kinds {
			c := tool.Call{Name: "t", Arguments: args, Owner: tool.Owner{Principal: "alice", Session: "s1"}}
			if k.question {
				c.Name, c.Arguments = "question", qargs
			}
			resume := k.suspend(t, c)
			for what, other := range map[string]func(tool.Call) tool.Call{
				"principal": func(r tool.Call) tool.Call { r.Owner.Principal = "mallory"; return r },
				"session":   func(r tool.Call) tool.Call { r.Owner.Session = "s2"; return r },
				"tool":      func(r tool.Call) tool.Call { r.Name += "_other"; return r },
				"argument":  func(r tool.Call) tool.Call { r.Arguments = withExtraKey(t, r.Arguments); return r },
			} {
				if resume(other(c)) {
					t.Fatalf("%s: a call with another %s resumed it (%s)", k.name, what, c.Arguments)
				}
			}
			same := c
			same.Arguments = reorderedJSON(t, c.Arguments)
			if !resume(same) {
				t.Fatalf("%s: the same call with reordered keys %s was refused (asked with %s)", k.name, same.Arguments, c.Arguments)
			}
		}
	})
}

func reorderedJSON(t *testing.T, args []byte) []byte {
	b, err := suspendtest.Reordered(args)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func withExtraKey(t *testing.T, args []byte) []byte {
	b, err := suspendtest.WithExtraKey(args)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
