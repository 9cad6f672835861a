package core_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/internal/approval"
	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// The core's policies: tools run unless a forbid matches; debug_sleep
// needs a human's approval.
const corePolicies = `@id("run")
permit(principal, action == Action::"execute", resource)
unless { resource == Tool::"debug_sleep" };

@id("no-rm")
@reason("rm -rf is never allowed")
forbid(principal, action, resource == Tool::"debug_echo")
when { context.arguments has command && context.arguments.command like "*rm -rf*" };

@id("human")
@approval("required")
permit(principal, action, resource == Tool::"debug_sleep");
`

func policyCore(t *testing.T, extra string) *core.Core {
	t.Helper()
	pol := filepath.Join(t.TempDir(), "tools.cedar")
	if err := os.WriteFile(pol, []byte(corePolicies), 0o600); err != nil {
		t.Fatal(err)
	}
	return newCore(t, fmt.Sprintf(`{"builtins": false, "skills": [], "debug": true,
		"auth": {"tokens": [{"name": "agent-a", "token": "tok-agent-a-0123456789"},
			{"name": "agent-b", "token": "tok-agent-b-0123456789"}, {"name": "reviewer", "token": "tok-reviewer-0123456789"}]},
		"policy": {"files": [%q], "approvers": ["reviewer", "agent-a"]}%s}`, pol, extra), core.Options{})
}

// The core applies the policies to every call, whatever front-end made it:
// a forbid refuses with its id and reason, a permit lets the call run.
func TestCorePolicyForbidAndPermit(t *testing.T) {
	t.Parallel()
	c := policyCore(t, "")
	a := principal(t, c, "tok-agent-a-0123456789")
	run := func(args string) tool.Result {
		cl := call("debug_echo", args)
		cl.Caller = a
		r, _ := c.Execute(context.Background(), cl)
		return r
	}
	if r := run(`{"command": "ls -la"}`); r.IsError || r.Output != `{"command":"ls -la"}` {
		t.Fatalf("a permitted call: %+v", r)
	}
	r := run(`{"command": "rm -rf /"}`)
	if r.Outcome != tool.OutcomeDenied || r.Output != "denied by policy no-rm: rm -rf is never allowed" {
		t.Fatalf("a forbidden call: %+v", r)
	}
	// The same key twice: the policy must not judge one value while the
	// tool runs the other.
	if r := run(`{"command": "ls", "command": "rm -rf /"}`); r.Outcome != tool.OutcomeDenied {
		t.Fatalf("a repeated key: %+v", r)
	}
}

// An approval binds the exact call: it suspends, the asker cannot decide
// it, other arguments and another principal cannot use it, and once
// approved it runs the call exactly once.
func TestCoreApprovalBindsTheCall(t *testing.T) {
	t.Parallel()
	c := policyCore(t, "")
	a, b := principal(t, c, "tok-agent-a-0123456789"), principal(t, c, "tok-agent-b-0123456789")
	reviewer := principal(t, c, "tok-reviewer-0123456789")
	run := func(p *auth.Principal, args string, ans *tool.Answer) tool.Result {
		cl := call("debug_sleep", args)
		cl.Caller, cl.Answer = p, ans
		r, _ := c.Execute(context.Background(), cl)
		return r
	}
	r := run(a, `{"ms": 1}`, nil)
	if r.Outcome != tool.OutcomePending || r.Pending == nil || r.Pending.Kind != core.PendingKindApproval {
		t.Fatalf("a call needing approval: %+v", r)
	}
	id := r.Pending.ID
	if _, err := c.Approvals(context.Background(), b); !errors.Is(err, core.ErrNotApprover) {
		t.Fatalf("agent-b listed approvals: %v", err)
	}
	if _, err := c.DecideApproval(context.Background(), a, id, true, ""); !errors.Is(err, approval.ErrSelf) {
		t.Fatalf("the asker approved its own call: %v", err)
	}
	if r := run(a, `{"ms": 1}`, &tool.Answer{ID: id, OK: true}); r.Outcome != tool.OutcomeDenied || !strings.Contains(r.Output, "still pending") {
		t.Fatalf("used before a decision: %+v", r)
	}
	list, err := c.Approvals(context.Background(), reviewer)
	if err != nil || len(list) != 1 || list[0].ID != id || list[0].Principal != "agent-a" {
		t.Fatalf("the reviewer's list: %+v, %v", list, err)
	}
	if _, err := c.DecideApproval(context.Background(), reviewer, id, true, "looks fine"); err != nil {
		t.Fatal(err)
	}
	for _, attack := range []struct {
		who  *auth.Principal
		args string
		want string
	}{
		{a, `{"ms": 2}`, "other arguments"},
		{b, `{"ms": 1}`, "another principal"},
	} {
		if r := run(attack.who, attack.args, &tool.Answer{ID: id, OK: true}); r.Outcome != tool.OutcomeDenied || !strings.Contains(r.Output, attack.want) {
			t.Fatalf("%s: %+v", attack.want, r)
		}
	}
	if r := run(a, `{"ms": 1}`, &tool.Answer{ID: id, OK: true}); r.IsError || r.Output != "slept 1ms" {
		t.Fatalf("the approved call: %+v", r)
	}
	if r := run(a, `{"ms": 1}`, &tool.Answer{ID: id, OK: true}); r.Outcome != tool.OutcomeDenied || !strings.Contains(r.Output, "already used") {
		t.Fatalf("the approval used twice: %+v", r)
	}
}

// Rate limits are per principal: one that spent its burst is refused with
// the delay, another is not slowed.
func TestCoreRateLimitsEachPrincipal(t *testing.T) {
	t.Parallel()
	c := policyCore(t, `, "limits": {"principals": {"*": {"callsPerSecond": 0.001, "burst": 1}}}`)
	admit := func(p *auth.Principal) bool {
		cl := call("debug_echo", `{}`)
		cl.Caller = p
		r, _ := c.Execute(context.Background(), cl)
		refused := r.Throttled
		if refused != nil && (refused.RetryAfter <= 0 || refused.Limit == "") {
			t.Fatalf("a refusal must say which limit and when to retry: %+v", refused)
		}
		return refused == nil
	}
	a, b := principal(t, c, "tok-agent-a-0123456789"), principal(t, c, "tok-agent-b-0123456789")
	if !admit(a) || admit(a) {
		t.Fatal("agent-a: want the first call admitted and the second refused")
	}
	if !admit(b) {
		t.Fatal("agent-b was slowed by agent-a's calls")
	}
}
