package core_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolnexus/toolnexus/internal/approval"
	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// suspendCore is a core with code mode, the question tool, a counted tool
// (cm_count) and one that needs a human's approval (cm_guarded), and the
// principals alice, bob and reviewer (the approver).
func suspendCore(t *testing.T, extra string) (*core.Core, *atomic.Int32) {
	t.Helper()
	pol := filepath.Join(t.TempDir(), "tools.cedar")
	if err := os.WriteFile(pol, []byte(`permit(principal, action, resource);
@approval("required")
permit(principal, action, resource == Tool::"cm_guarded");
`), 0o600); err != nil {
		t.Fatal(err)
	}
	var counted atomic.Int32
	count := tool.Must(tool.Native("cm_count", func(context.Context, map[string]any) (any, error) {
		return map[string]any{"n": counted.Add(1)}, nil
	}))
	guarded := tool.Must(tool.Native("cm_guarded", func(_ context.Context, a map[string]any) (any, error) {
		return map[string]any{"done": a["n"]}, nil
	}))
	c := newCore(t, fmt.Sprintf(`{"skills": [], "builtins": {"tools": {"bash": false, "webfetch": false}},
		"codeMode": {"enabled": true, "timeoutMs": 5000},
		"auth": {"tokens": [{"name": "alice", "token": "tok-alice-0123456789"}, {"name": "bob", "token": "tok-bob-0123456789"},
			{"name": "reviewer", "token": "tok-reviewer-0123456789"}]},
		"policy": {"files": [%q], "approvers": ["reviewer"]}%s}`, pol, extra), core.Options{Native: []tool.Tool{count, guarded}})
	return c, &counted
}

// runCode runs code as p over unary gRPC's contract (a PENDING ends the
// call), resuming with answer when it is set.
//
// The tests that run scripts are not parallel: the interpreter child dies
// with the thread that started it (Pdeathsig), and a parallel test's
// sandbox may lock that thread and end it.
func runCode(t *testing.T, c *core.Core, p *auth.Principal, code string, answer *tool.Answer) tool.Result {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"code": code})
	r, _ := c.Execute(context.Background(), core.Call{Name: "run_code", Arguments: args, Protocol: core.ProtocolGRPC, Caller: p, Answer: answer})
	return r
}

// 45.8: resuming a suspended script before the approver decides leaves it
// suspended (nothing runs again), so is starting it again; once approved,
// the resume finishes it and the earlier inner call ran exactly once.
func TestRunCodeResumedBeforeTheDecisionIsKept(t *testing.T) {
	c, counted := suspendCore(t, "")
	alice, reviewer := principal(t, c, "tok-alice-0123456789"), principal(t, c, "tok-reviewer-0123456789")
	const code = `const n = tools.cm_count({}).n; return tools.cm_guarded({n: n})`
	r := runCode(t, c, alice, code, nil)
	if r.Outcome != tool.OutcomePending || r.Pending.Kind != "approval" {
		t.Fatalf("want cm_guarded's approval, got %+v", r)
	}
	id := r.Pending.ID
	early := runCode(t, c, alice, code, &tool.Answer{ID: id, OK: true})
	if !early.IsError || !strings.Contains(early.Output, approval.ErrNotYet.Error()) || !strings.Contains(early.Output, "stays suspended") {
		t.Fatalf("resumed before the decision: %+v", early)
	}
	if again := runCode(t, c, alice, code, nil); again.Outcome != tool.OutcomePending || again.Pending.ID != id {
		t.Fatalf("started again while suspended: %+v, want the same PENDING %s", again, id)
	}
	if _, err := c.DecideApproval(context.Background(), reviewer, id, true, ""); err != nil {
		t.Fatal(err)
	}
	done := runCode(t, c, alice, code, &tool.Answer{ID: id, OK: true})
	if done.IsError || done.Output != `{"done":1}` {
		t.Fatalf("resumed after the approval: %+v", done)
	}
	if n := counted.Load(); n != 1 {
		t.Fatalf("cm_count ran %d times; the script's earlier inner calls must run once", n)
	}
	if r := runCode(t, c, alice, code, &tool.Answer{ID: id, OK: true}); !r.IsError || !strings.Contains(r.Output, "resumes no suspended run_code") {
		t.Fatalf("resumed twice: %+v", r)
	}
}

// 45.9: two principals run the same script, which asks the same question:
// each has a run and a question of its own, each gets its own answer, and
// neither's answer resumes the other's.
func TestRunCodeSameQuestionTwoPrincipals(t *testing.T) {
	c, _ := suspendCore(t, "")
	alice, bob := principal(t, c, "tok-alice-0123456789"), principal(t, c, "tok-bob-0123456789")
	const code = `const a = tools.question({questions: [{question: "Which color?"}]}); "color: " + a["Which color?"]`
	qa, qb := runCode(t, c, alice, code, nil), runCode(t, c, bob, code, nil)
	if qa.Pending == nil || qb.Pending == nil || qa.Pending.Kind != "question" || qa.Pending.ID == qb.Pending.ID {
		t.Fatalf("two principals' questions: %+v / %+v; want two questions of their own", qa.Pending, qb.Pending)
	}
	answer := func(id, color string) *tool.Answer {
		return &tool.Answer{ID: id, OK: true, Data: map[string]any{"Which color?": color}}
	}
	if r := runCode(t, c, bob, code, answer(qa.Pending.ID, "stolen")); !r.IsError || !strings.Contains(r.Output, "resumes no suspended run_code") {
		t.Fatalf("bob answered alice's question: %+v", r)
	}
	if r := runCode(t, c, alice, code, answer(qa.Pending.ID, "red")); r.IsError || r.Output != `"color: red"` {
		t.Fatalf("alice: %+v", r)
	}
	if r := runCode(t, c, bob, code, answer(qb.Pending.ID, "blue")); r.IsError || r.Output != `"color: blue"` {
		t.Fatalf("bob: %+v", r)
	}
}

// Suspended scripts are capped per principal (limits.maxPending): one
// principal at its cap cannot suspend another, and others still can.
func TestRunCodeSuspendedRunsCappedPerPrincipal(t *testing.T) {
	c, _ := suspendCore(t, `, "limits": {"maxPending": 2}`)
	alice, bob := principal(t, c, "tok-alice-0123456789"), principal(t, c, "tok-bob-0123456789")
	script := func(i int) string { return fmt.Sprintf(`return tools.cm_guarded({n: %d})`, i) }
	for i := range 2 {
		if r := runCode(t, c, alice, script(i), nil); r.Outcome != tool.OutcomePending {
			t.Fatalf("alice's script %d: %+v", i, r)
		}
	}
	r := runCode(t, c, alice, script(2), nil)
	if r.Outcome == tool.OutcomePending || !r.IsError || !strings.Contains(r.Output, "alice already has 2") || !strings.Contains(r.Output, "limits.maxPending") {
		t.Fatalf("alice's third suspended script: %+v", r)
	}
	if r := runCode(t, c, bob, script(2), nil); r.Outcome != tool.OutcomePending {
		t.Fatalf("bob, under his own cap: %+v", r)
	}
}

// A script's inner calls are replayed by their canonical arguments, so an
// object built with its keys in another order on the re-run is the same
// call (the digest every suspended kind binds to). The order is drawn at
// random in each run: eight resumes all pass only if order never matters
// (compared as raw bytes, they would all pass once in 256 times).
func TestRunCodeReplayIgnoresKeyOrder(t *testing.T) {
	c, counted := suspendCore(t, "")
	alice, reviewer := principal(t, c, "tok-alice-0123456789"), principal(t, c, "tok-reviewer-0123456789")
	for i := range 8 {
		code := fmt.Sprintf(`const o = Math.random() < 0.5 ? {a: 1, b: 2} : {b: 2, a: 1};
tools.cm_count({o: o});
return tools.cm_guarded({n: %d})`, i)
		r := runCode(t, c, alice, code, nil)
		if r.Outcome != tool.OutcomePending {
			t.Fatalf("run %d: want the approval, got %+v", i, r)
		}
		if _, err := c.DecideApproval(context.Background(), reviewer, r.Pending.ID, true, ""); err != nil {
			t.Fatal(err)
		}
		if done := runCode(t, c, alice, code, &tool.Answer{ID: r.Pending.ID, OK: true}); done.IsError || done.Output != fmt.Sprintf(`{"done":%d}`, i) {
			t.Fatalf("run %d resumed: %+v", i, done)
		}
	}
	if n := counted.Load(); n != 8 {
		t.Fatalf("cm_count ran %d times for 8 scripts", n)
	}
}

// An approval answered ok: false does not run the call, and the caller is
// told what happened: nothing was withdrawn, the approval stays pending.
func TestApprovalAnsweredNotOKSaysWhatHappened(t *testing.T) {
	t.Parallel()
	c, _ := suspendCore(t, "")
	alice, reviewer := principal(t, c, "tok-alice-0123456789"), principal(t, c, "tok-reviewer-0123456789")
	guarded := func(a *tool.Answer) tool.Result {
		r, _ := c.Execute(context.Background(), core.Call{Name: "cm_guarded", Arguments: json.RawMessage(`{"n": 7}`), Caller: alice, Answer: a, Protocol: core.ProtocolGRPC})
		return r
	}
	p := guarded(nil).Pending
	r := guarded(&tool.Answer{ID: p.ID})
	if r.Outcome != tool.OutcomeDenied || strings.Contains(r.Output, "withdrawn") || !strings.Contains(r.Output, "does not run") || !strings.Contains(r.Output, "unchanged") {
		t.Fatalf("ok: false: %+v", r)
	}
	list, err := c.Approvals(context.Background(), reviewer)
	if err != nil || len(list) != 1 || list[0].ID != p.ID || list[0].Status != approval.Pending {
		t.Fatalf("the approval after ok: false: %+v, %v; want it still pending", list, err)
	}
}
