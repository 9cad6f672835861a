package server_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/mcpclient"
	"github.com/toolnexus/toolnexus/pkg/server"
)

// Two deployments on one Redis (cluster.name "blue" and "green") share
// nothing: green's approver can neither see nor approve nor deny a call
// held in blue, which blue's approver still can. With the one default
// prefix of earlier versions green's approver approved it.
func TestAnotherDeploymentsApproverCannotApprove(t *testing.T) {
	t.Parallel()
	srv := testutil.StartRedis(t)
	blue := pb.NewRegistryServiceClient(dialGRPC(t, approvalDeployment(t, srv, "blue", 1)[0]))
	blueApr := pb.NewApprovalServiceClient(dialGRPC(t, approvalDeployment(t, srv, "blue", 1)[0]))
	greenApr := pb.NewApprovalServiceClient(dialGRPC(t, approvalDeployment(t, srv, "green", 1)[0]))

	const args = `{"path": "held.txt", "content": "blue's"}`
	resp, err := blue.Execute(bearer(testutil.PolAgentA), &pb.ExecuteRequest{Name: "write", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: args}})
	if err != nil || resp.GetResult().GetOutcome() != pb.Outcome_OUTCOME_PENDING {
		t.Fatalf("write in blue: %v %v", err, resp.GetResult())
	}
	id := resp.GetResult().GetPending().GetId()

	list, err := greenApr.ListApprovals(bearer(testutil.PolReviewer), &pb.ListApprovalsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range list.GetApprovals() {
		if a.GetId() == id {
			t.Fatalf("green's approvers see blue's held call: %v", a)
		}
	}
	if _, err := greenApr.Approve(bearer(testutil.PolReviewer), &pb.ApproveRequest{Id: id}); status.Code(err) != codes.NotFound {
		t.Fatalf("green's approver approving blue's call: %v, want NOT_FOUND", err)
	}
	if _, err := greenApr.Deny(bearer(testutil.PolReviewer), &pb.DenyRequest{Id: id, Reason: "not mine"}); status.Code(err) != codes.NotFound {
		t.Fatalf("green's approver denying blue's call: %v, want NOT_FOUND", err)
	}
	held, err := blueApr.ListApprovals(bearer(testutil.PolReviewer), &pb.ListApprovalsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(held.GetApprovals(), func(a *pb.Approval) bool { return a.GetId() == id }); i < 0 || held.GetApprovals()[i].GetStatus() != "pending" {
		t.Fatalf("blue's list after green's attempts: %v", held.GetApprovals())
	}
	if _, err := blueApr.Approve(bearer(testutil.PolReviewer), &pb.ApproveRequest{Id: id}); err != nil {
		t.Fatalf("blue's own approver: %v", err)
	}
}

// The requestState of a 2026-07-28 client's suspended call is signed with
// a key the deployment's replicas share through Redis (made once), with
// no server.mcp.stateKeyFile: the call suspended on one replica is
// answered on the other. A replica of another deployment on the same
// Redis has a key of its own and refuses the state.
func TestMCPStateKeySharedThroughRedis(t *testing.T) {
	t.Parallel()
	srv := testutil.StartRedis(t)
	root := t.TempDir()
	var mcpURLs []string
	for _, name := range []string{"blue", "blue", "green"} {
		cfg := fmt.Sprintf(`{"builtins": true, "skills": [], "sessions": {"shared": true, "root": %q},
  "cluster": {"name": %q, "redis": {"url": %q, "timeout": 2000}}}`, root, name, srv.URL)
		s, _, _ := launch(t, cfg, func(o *server.Options) {
			o.MetricsListen = "-"
			o.MCPListen = "127.0.0.1:0"
		})
		mcpURLs = append(mcpURLs, "http://"+s.MCPAddr().String()+server.MCPPath)
	}
	var args map[string]any
	_ = json.Unmarshal([]byte(mcpclient.QuestionArgs), &args)
	good := &mcp.ElicitResult{Action: "accept", Content: map[string]any{"q1": "green", "q2": "calm"}}

	state, id := mcpclient.Suspend(t, mcpclient.Modern(t, mcpURLs[0]), "question", args)
	if msg := mcpclient.Refused(t, mcpclient.Modern(t, mcpURLs[2]), "question", args, state, id, good); !strings.Contains(msg, "signature") {
		t.Fatalf("another deployment's replica took the state: %q", msg)
	}
	if res := mcpclient.Retry(t, mcpclient.Modern(t, mcpURLs[1]), "question", args, state, id, good); res.IsError || mcpclient.Text(t, res) != `{"Pick a color?":"green","Why?":"calm"}` {
		t.Fatalf("answered on the deployment's other replica: %q", mcpclient.Text(t, res))
	}
}
