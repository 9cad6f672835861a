package core_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/inproc"
)

// TestRefusedCallsCreateNoSession: a call a policy denies and a call with
// invalid arguments end before the session step, so the session they
// name is never created (no workspace, nothing in ListSessions, nothing
// counted toward sessions.max); an admitted call in a session creates it.
func TestRefusedCallsCreateNoSession(t *testing.T) {
	t.Parallel()
	p := policyServe(t, "")
	for _, c := range []struct {
		name, session, tool, args string
		want                      pb.Outcome
	}{
		{"policy denies", "denied-s", "bash", `{"command": "rm -rf /tmp/x"}`, pb.Outcome_OUTCOME_DENIED},
		{"arguments missing", "invalid-s", "write", `{"path": "docs/a.md"}`, pb.Outcome_OUTCOME_INVALID_ARGUMENTS},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := p.reg.Execute(inproc.InSession(testutil.PolAgentA, c.session), &pb.ExecuteRequest{Name: c.tool, Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: c.args}})
			if err != nil || r.GetResult().GetOutcome() != c.want {
				t.Fatalf("%v %v, want %v", r.GetResult(), err, c.want)
			}
		})
	}
	if r, err := p.reg.Execute(inproc.InSession(testutil.PolAgentA, "ok-s"), &pb.ExecuteRequest{Name: "write", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{"path": "docs/a.md", "content": "x"}`}}); err != nil || r.GetResult().GetIsError() {
		t.Fatalf("the admitted call: %v %v", r.GetResult(), err)
	}
	ids := inproc.SessionIDs(t, inproc.Bearer(testutil.PolAgentA), p.Conn)
	if !slices.Contains(ids, "agent-a/ok-s") || slices.Contains(ids, "agent-a/denied-s") || slices.Contains(ids, "agent-a/invalid-s") {
		t.Fatalf("sessions %v: want ok-s only", ids)
	}
}

// TestRateLimitedCallIsAudited: a call refused by a rate limit leaves its
// audit line like any other refused call.
func TestRateLimitedCallIsAudited(t *testing.T) {
	t.Parallel()
	p := policyServe(t, `}, "limits": {"principals": {"agent-b": {"callsPerSecond": 0.01, "burst": 1}}`)
	args := `{"path": "docs/audited.md", "content": "x"}`
	for i := range 2 {
		_, err := p.reg.Execute(inproc.Bearer(testutil.PolAgentB), &pb.ExecuteRequest{Name: "write", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: args}})
		if want := []codes.Code{codes.OK, codes.ResourceExhausted}[i]; status.Code(err) != want {
			t.Fatalf("call %d: %v, want %v", i, err, want)
		}
	}
	audit, _ := os.ReadFile(p.audit)
	var lines []string
	for _, l := range strings.Split(string(audit), "\n") {
		if strings.Contains(l, `"tool":"write"`) && strings.Contains(l, `"principal":"agent-b"`) {
			lines = append(lines, l)
		}
	}
	if len(lines) != 2 || !strings.Contains(lines[1], `"outcome":"denied"`) {
		t.Fatalf("want two audit lines, the second denied; got:\n%s", strings.Join(lines, "\n"))
	}
}

// TestHiddenToolRateLimitUntouched is the attack of a caller that cannot
// see a tool on that tool's shared bucket: its calls read "unknown tool"
// (never the limit, which would name the hidden tool), charge nothing, and
// the next caller allowed the tool is served. A caller over its own limit
// does not spend the tool's tokens either.
func TestHiddenToolRateLimitUntouched(t *testing.T) {
	t.Parallel()
	const reader, runner, greedy = "pipe-reader-token-0a1b2c", "pipe-runner-token-3d4e5f", "pipe-greedy-token-6a7b8c"
	s := inproc.Serve(t, fmt.Sprintf(`{"skills": [], "auth": {"tokens": [
		{"name": "reader", "token": %q, "tools": ["write"]},
		{"name": "runner", "token": %q},
		{"name": "greedy", "token": %q}]},
		"limits": {"tools": {"read": {"callsPerSecond": 0.01, "burst": 1}},
			"principals": {"greedy": {"callsPerSecond": 0.01, "burst": 1}}}}`, reader, runner, greedy))
	reg := s.Registry
	execTool := func(tok, name, args string) (*pb.ToolResult, error) {
		r, err := reg.Execute(inproc.Bearer(tok), &pb.ExecuteRequest{Name: name, Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: args}})
		return r.GetResult(), err
	}
	exec := func(tok, args string) (*pb.ToolResult, error) { return execTool(tok, "read", args) }
	for i := range 3 {
		r, err := exec(reader, `{}`)
		if err != nil || r.GetOutcome() != pb.Outcome_OUTCOME_UNKNOWN_TOOL || strings.Contains(r.GetOutput(), "limits.tools") {
			// (err would be RESOURCE_EXHAUSTED naming limits.tools.read)
			t.Fatalf("hidden call %d: %v %v; want unknown tool, no limit named", i, r, err)
		}
	}
	// greedy spends its own only token on something else, then is refused
	// by its own limit: the tool's bucket is untouched by that refusal.
	if r, err := execTool(greedy, "write", `{}`); err != nil || !r.GetIsError() {
		t.Fatalf("greedy's first call: %v %v", r, err)
	}
	if _, err := exec(greedy, `{}`); status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "limits.principals.greedy") {
		t.Fatalf("greedy over its own limit: %v", err)
	}
	if r, err := exec(runner, `{"path": "nothing-here.txt"}`); err != nil || r.GetOutcome() == pb.Outcome_OUTCOME_UNKNOWN_TOOL {
		t.Fatalf("the allowed caller found the tool's bucket drained: %v %v", r, err)
	}
	if _, err := exec(runner, `{"path": "nothing-here.txt"}`); status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "limits.tools.read") {
		t.Fatalf("the tool's limit itself: %v", err)
	}
}
