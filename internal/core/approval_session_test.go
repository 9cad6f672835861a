package core_test

import (
	"context"
	"strings"
	"testing"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/inproc"
)

// TestApprovalBoundToSession: an approval asked in one session is listed
// with that session for the approver, and the same principal cannot redeem
// it from another session (or from none); from its own, it runs once.
func TestApprovalBoundToSession(t *testing.T) {
	t.Parallel()
	p := policyServe(t, "")
	args := `{"path": "s.txt", "content": "in a session"}`
	inS1 := inproc.InSession(testutil.PolAgentA, "s1")
	r, err := p.reg.Execute(inS1, &pb.ExecuteRequest{Name: "write", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: args}})
	if err != nil {
		t.Fatal(err)
	}
	id := r.GetResult().GetPending().GetId()
	if id == "" || r.GetResult().GetPending().GetData().GetFields()["session"].GetStringValue() != "s1" {
		t.Fatalf("want a pending approval naming session s1, got %v", r.GetResult())
	}
	list, err := p.apr.ListApprovals(inproc.Bearer(testutil.PolReviewer), &pb.ListApprovalsRequest{})
	if err != nil || len(list.GetApprovals()) != 1 || list.GetApprovals()[0].GetSession() != "s1" {
		t.Fatalf("the approver does not see the session: %v %v", list, err)
	}
	if _, err := p.apr.Approve(inproc.Bearer(testutil.PolReviewer), &pb.ApproveRequest{Id: id}); err != nil {
		t.Fatal(err)
	}
	for _, ctx := range []struct {
		name string
		ctx  context.Context
	}{{"another session", inproc.InSession(testutil.PolAgentA, "s2")}, {"no session", inproc.Bearer(testutil.PolAgentA)}} {
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
	first := p.pending(t, testutil.PolAgentA, `{"path": "a.txt", "content": "1"}`)
	if again := p.pending(t, testutil.PolAgentA, `{"content": "1", "path": "a.txt"}`); again != first {
		t.Fatalf("an identical retry made approval %s beside %s", again, first)
	}
	p.pending(t, testutil.PolAgentA, `{"path": "a.txt", "content": "2"}`)
	r := p.exec(t, testutil.PolAgentA, "write", `{"path": "a.txt", "content": "3"}`, nil)
	if r.GetOutcome() != pb.Outcome_OUTCOME_DENIED || !strings.Contains(r.GetOutput(), "policy.maxPending") {
		t.Fatalf("agent-a's third call: %v", r)
	}
	p.pending(t, testutil.PolAgentB, `{"path": "b.txt", "content": "1"}`) // not blocked by agent-a
}
