package server_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

// approvedElicitation serves server-everything to alice (a caller) and
// mallory (an approver), with a policy that sends its elicitation tool to
// a human first.
func approvedElicitation(t *testing.T) (*fixture, pb.ApprovalServiceClient) {
	t.Helper()
	entry := everythingServer(t)
	pol := filepath.Join(t.TempDir(), "p.cedar")
	if err := os.WriteFile(pol, []byte(`permit(principal, action, resource);
@id("elicit-needs-approval")
@approval("required")
permit(principal, action, resource == Tool::"everything_trigger-elicitation-request");
`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TN_ALICE", aliceSecret)
	t.Setenv("TN_MALLORY", mallorySecret)
	f := start(t, fmt.Sprintf(`{"builtins": false, "skills": [],
		"auth": {"tokens": [{"name": "alice", "token": "${TN_ALICE}"}, {"name": "mallory", "token": "${TN_MALLORY}"}]},
		"policy": {"files": [%q], "approvers": ["mallory"]},
		"mcpServers": {"everything": {"command": "node", "args": [%q, "stdio"], "timeout": 60000}}}`, pol, entry))
	return f, pb.NewApprovalServiceClient(f.conn)
}

// TestApprovedToolThatElicits: a call gated by an approval, once approved,
// runs and elicits; the answer to the elicitation resumes it (the gate
// claims only the approval ids it owns). Before the one suspended-call
// store the answer was refused: "approval elicitation-… refused: no such
// approval".
func TestApprovedToolThatElicits(t *testing.T) {
	f, apr := approvedElicitation(t)
	alice, mallory := bearer(aliceSecret), bearer(mallorySecret)
	const name = "everything_trigger-elicitation-request"

	ap := pendingOf(t, execAs(t, alice, f, name, `{}`, nil), "approval")
	if _, err := apr.Approve(mallory, &pb.ApproveRequest{Id: ap.GetId()}); err != nil {
		t.Fatal(err)
	}
	el := pendingOf(t, execAs(t, alice, f, name, `{}`, &pb.Answer{Id: ap.GetId(), Ok: true}), "elicitation")
	r := execAs(t, alice, f, name, `{}`, &pb.Answer{Id: el.GetId(), Ok: true, Data: value(t, map[string]any{"name": "Ada Lovelace", "integer": 7})})
	if r.GetIsError() || !strings.Contains(r.GetOutput(), "- Name: Ada Lovelace") {
		t.Fatalf("the elicitation's answer did not resume the approved call: %v", r)
	}
}

// TestAnswerDoesNotBypassApproval: an answer whose id is not an approval's
// does not let a call that needs approval run: an invented id, and the id
// of another principal's open elicitation, are both refused.
func TestAnswerDoesNotBypassApproval(t *testing.T) {
	f, apr := approvedElicitation(t)
	alice, mallory := bearer(aliceSecret), bearer(mallorySecret)
	const name = "everything_trigger-elicitation-request"

	// Alice's call, approved, waits on an elicitation: its id is real.
	ap := pendingOf(t, execAs(t, alice, f, name, `{}`, nil), "approval")
	if _, err := apr.Approve(mallory, &pb.ApproveRequest{Id: ap.GetId()}); err != nil {
		t.Fatal(err)
	}
	el := pendingOf(t, execAs(t, alice, f, name, `{}`, &pb.Answer{Id: ap.GetId(), Ok: true}), "elicitation")
	for _, c := range []struct {
		name, who, id string
	}{
		{"invented elicitation id", "mallory", "elicitation_AAAAAAAAAAAAAAAAAAAAAAAAAA"},
		{"another principal's elicitation", "mallory", el.GetId()},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := execAs(t, mallory, f, name, `{}`, &pb.Answer{Id: c.id, Ok: true, Data: value(t, map[string]any{"name": "Mallory"})})
			if r.GetOutcome() != pb.Outcome_OUTCOME_DENIED || strings.Contains(r.GetOutput(), "Mallory") {
				t.Fatalf("an answer bypassed the approval: %v", r)
			}
		})
	}
}

// TestApprovalBoundToSession: an approval asked in one session is listed
// with that session for the approver, and the same principal cannot redeem
// it from another session (or from none); from its own, it runs once.
func TestApprovalBoundToSession(t *testing.T) {
	t.Parallel()
	p := policyServe(t, "")
	args := `{"path": "s.txt", "content": "in a session"}`
	inS1 := inSession(polAgentA, "s1")
	r, err := p.reg.Execute(inS1, &pb.ExecuteRequest{Name: "write", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: args}})
	if err != nil {
		t.Fatal(err)
	}
	id := r.GetResult().GetPending().GetId()
	if id == "" || r.GetResult().GetPending().GetData().GetFields()["session"].GetStringValue() != "s1" {
		t.Fatalf("want a pending approval naming session s1, got %v", r.GetResult())
	}
	list, err := p.apr.ListApprovals(bearer(polReviewer), &pb.ListApprovalsRequest{})
	if err != nil || len(list.GetApprovals()) != 1 || list.GetApprovals()[0].GetSession() != "s1" {
		t.Fatalf("the approver does not see the session: %v %v", list, err)
	}
	if _, err := p.apr.Approve(bearer(polReviewer), &pb.ApproveRequest{Id: id}); err != nil {
		t.Fatal(err)
	}
	for _, ctx := range []struct {
		name string
		ctx  context.Context
	}{{"another session", inSession(polAgentA, "s2")}, {"no session", bearer(polAgentA)}} {
		t.Run(ctx.name, func(t *testing.T) {
			r, err := p.reg.Execute(ctx.ctx, &pb.ExecuteRequest{Name: "write", Answer: &pb.Answer{Id: id, Ok: true}, Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: args}})
			if err != nil || r.GetResult().GetOutcome() != pb.Outcome_OUTCOME_DENIED || !strings.Contains(r.GetResult().GetOutput(), "another session") {
				t.Fatalf("redeemed from %s: %v %v", ctx.name, r.GetResult(), err)
			}
		})
	}
	r, err = p.reg.Execute(inS1, &pb.ExecuteRequest{Name: "write", Answer: &pb.Answer{Id: id, Ok: true}, Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: args}})
	if err != nil || r.GetResult().GetIsError() {
		t.Fatalf("from its own session: %v %v", r.GetResult(), err)
	}
}

// TestMaxPendingPerPrincipalOverTheWire: one principal's retries of one
// call reuse its approval, and its other calls fill only its own share of
// policy.maxPending; another principal's call still gets an approval.
func TestMaxPendingPerPrincipalOverTheWire(t *testing.T) {
	t.Parallel()
	p := policyServe(t, `, "maxPending": 2`)
	first := p.pending(t, polAgentA, `{"path": "a.txt", "content": "1"}`)
	if again := p.pending(t, polAgentA, `{"content": "1", "path": "a.txt"}`); again != first {
		t.Fatalf("an identical retry made approval %s beside %s", again, first)
	}
	p.pending(t, polAgentA, `{"path": "a.txt", "content": "2"}`)
	r := p.exec(t, polAgentA, "write", `{"path": "a.txt", "content": "3"}`, nil)
	if r.GetOutcome() != pb.Outcome_OUTCOME_DENIED || !strings.Contains(r.GetOutput(), "policy.maxPending") {
		t.Fatalf("agent-a's third call: %v", r)
	}
	p.pending(t, polAgentB, `{"path": "b.txt", "content": "1"}`) // not blocked by agent-a
}
