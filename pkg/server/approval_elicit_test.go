package server_test

import (
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
