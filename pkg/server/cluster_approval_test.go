package server_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/server"
)

// approvalReplicas starts three replicas with the wire policies sharing
// srv, behind nginx round robin; it returns the balancer and each
// replica's own address.
func approvalReplicas(t *testing.T, srv *testutil.RedisServer) (lb string, addrs []string) {
	t.Helper()
	addrs = approvalReplicaAddrs(t, srv)
	return startNginx(t, addrs), addrs
}

// approvalReplicaAddrs starts the replicas of approvalReplicas, without
// the balancer.
func approvalReplicaAddrs(t testing.TB, srv *testutil.RedisServer) (addrs []string) {
	t.Helper()
	return approvalDeployment(t, srv, "test", 3)
}

// approvalDeployment starts n replicas of deployment name (cluster.name)
// with the wire policies, sharing srv.
func approvalDeployment(t testing.TB, srv *testutil.RedisServer, name string, n int) (addrs []string) {
	t.Helper()
	pol := testutil.WriteWirePolicies(t, t.TempDir())
	cfg := fmt.Sprintf(`{"skills": [], "builtins": {"tools": {"webfetch": false}},
  "cluster": {"name": %q, "redis": {"url": %q, "timeout": 2000}},
  "auth": {"tokens": [{"name": "agent-a", "token": %q}, {"name": "ops", "token": %q, "admin": true}, {"name": "reviewer", "token": %q}]},
  "policy": {"files": [%q], "approvers": ["reviewer"]}}`, name, srv.URL, testutil.PolAgentA, testutil.PolOps, testutil.PolReviewer, pol)
	for range n {
		s, _, _ := launch(t, cfg, func(o *server.Options) { o.MetricsListen = "-" })
		addrs = append(addrs, s.Addr().String())
	}
	return addrs
}

// Twenty approvals asked, listed, approved and redeemed through round
// robin: each step lands on any replica, and every one works.
func TestApprovalsWorkOnEveryReplicaBehindRoundRobin(t *testing.T) {
	t.Parallel()
	nginxPath(t)
	srv := testutil.StartRedis(t)
	lb, _ := approvalReplicas(t, srv)
	conn := dialGRPC(t, lb)
	reg, apr := pb.NewRegistryServiceClient(conn), pb.NewApprovalServiceClient(conn)
	const n = 20
	args := func(i int) string { return fmt.Sprintf(`{"path": "f%02d.txt", "content": "%d"}`, i, i) }
	ids := make([]string, n)
	for i := range n {
		resp, err := reg.Execute(bearer(testutil.PolAgentA), &pb.ExecuteRequest{Name: "write", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: args(i)}})
		if err != nil || resp.GetResult().GetOutcome() != pb.Outcome_OUTCOME_PENDING {
			t.Fatalf("write %d: %v %v", i, err, resp.GetResult())
		}
		ids[i] = resp.GetResult().GetPending().GetId()
	}
	for range 3 { // three lists: three replicas
		list, err := apr.ListApprovals(bearer(testutil.PolReviewer), &pb.ListApprovalsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var listed []string
		for _, a := range list.GetApprovals() {
			listed = append(listed, a.GetId())
		}
		for _, id := range ids {
			if !slices.Contains(listed, id) {
				t.Fatalf("a replica's list lacks %s: %v", id, listed)
			}
		}
	}
	for i, id := range ids {
		if _, err := apr.Approve(bearer(testutil.PolReviewer), &pb.ApproveRequest{Id: id}); err != nil {
			t.Fatalf("approve %d: %v", i, err)
		}
	}
	for i, id := range ids {
		resp, err := reg.Execute(bearer(testutil.PolAgentA), &pb.ExecuteRequest{Name: "write", Answer: &pb.Answer{Id: id, Ok: true},
			Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: args(i)}})
		if err != nil || resp.GetResult().GetIsError() {
			t.Fatalf("redeem %d: %v %v", i, err, resp.GetResult())
		}
	}
	// Single use holds across replicas: a replay anywhere is refused.
	for i := range 3 {
		resp, err := reg.Execute(bearer(testutil.PolAgentA), &pb.ExecuteRequest{Name: "write", Answer: &pb.Answer{Id: ids[0], Ok: true},
			Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: args(0)}})
		if err != nil || resp.GetResult().GetOutcome() != pb.Outcome_OUTCOME_DENIED || !strings.Contains(resp.GetResult().GetOutput(), "already used") {
			t.Fatalf("replay %d: %v %v", i, err, resp.GetResult())
		}
	}
}

// A caller waiting on ExecuteStream on one replica ends when another
// replica records the decision: woken by Redis pub/sub, well under the
// store's 2 s safety poll.
func TestStreamedCallWakesOnAnotherReplicasDecision(t *testing.T) {
	t.Parallel()
	srv := testutil.StartRedis(t)
	addrs := approvalReplicaAddrs(t, srv)
	regA := pb.NewRegistryServiceClient(dialGRPC(t, addrs[0]))
	aprB := pb.NewApprovalServiceClient(dialGRPC(t, addrs[1]))
	var waits []time.Duration
	for i := range 10 {
		stream, err := regA.ExecuteStream(bearer(testutil.PolAgentA), &pb.ExecuteRequest{Name: "write",
			Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: fmt.Sprintf(`{"path": "s%d.txt", "content": "s"}`, i)}})
		if err != nil {
			t.Fatal(err)
		}
		ev, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		id, ok := strings.CutPrefix(ev.GetLog().GetData().GetStringValue(), "waiting for approval ")
		if !ok {
			t.Fatalf("first event: %v", ev)
		}
		if _, err := aprB.Approve(bearer(testutil.PolReviewer), &pb.ApproveRequest{Id: id}); err != nil {
			t.Fatal(err)
		}
		decided := time.Now()
		for {
			ev, err := stream.Recv()
			if err != nil {
				t.Fatal(err)
			}
			if res := ev.GetResult(); res != nil {
				if res.GetIsError() {
					t.Fatalf("%v", res)
				}
				break
			}
		}
		waits = append(waits, time.Since(decided))
	}
	slices.Sort(waits)
	t.Logf("decision on B → stream on A ends: p50 %s, max %s", waits[len(waits)/2], waits[len(waits)-1])
	if waits[len(waits)-1] >= time.Second {
		t.Fatalf("a waiter took %s: not woken by the decision", waits[len(waits)-1])
	}
}

// kill -9 Redis mid-run: a call that needs approval is refused with a
// clear is_error (nothing runs), and works again once Redis is back,
// without a restart.
func TestApprovalsFailClosedWhileRedisIsDown(t *testing.T) {
	t.Parallel()
	srv := testutil.StartRedis(t)
	addrs := approvalReplicaAddrs(t, srv)
	reg := pb.NewRegistryServiceClient(dialGRPC(t, addrs[0]))
	write := func() *pb.ToolResult {
		resp, err := reg.Execute(bearer(testutil.PolAgentA), &pb.ExecuteRequest{Name: "write",
			Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{"path": "down.txt", "content": "x"}`}})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetResult()
	}
	if r := write(); r.GetOutcome() != pb.Outcome_OUTCOME_PENDING {
		t.Fatalf("before: %v", r)
	}
	srv.Kill()
	r := write()
	if !r.GetIsError() || !strings.Contains(r.GetOutput(), "cluster.redis") || !strings.Contains(r.GetOutput(), "cannot be reached") {
		t.Fatalf("with Redis down: %v", r)
	}
	srv.Start()
	deadline := time.Now().Add(10 * time.Second)
	for write().GetOutcome() != pb.Outcome_OUTCOME_PENDING {
		if time.Now().After(deadline) {
			t.Fatal("approvals never worked again after Redis returned")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
