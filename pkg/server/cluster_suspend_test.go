package server_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
)

// Every suspended kind is an entry of the one store of suspended calls, so
// with cluster.redis every kind whose state allows it resumes on any
// replica: two real server processes share one redis-server, and each
// test alternates between them as round robin would (A, B, A, B, ...).

const (
	bobSecret      = "bob-secret-token-0123456789"
	reviewerSecret = "reviewer-secret-token-0123456789"
)

// suspendReplicas starts two replica processes sharing srv: code mode, the
// builtin question and write tools (write needs an approver's approval),
// debug_echo, a 2026-07-28 upstream (up_confirm) and an audit log each, in
// dir/audit-<replica>.log.
func suspendReplicas(t *testing.T, srv *testutil.RedisServer, upstream, dir string) (a, b pb.RegistryServiceClient, apr [2]pb.ApprovalServiceClient) {
	t.Helper()
	pol := filepath.Join(dir, "tools.cedar")
	if err := os.WriteFile(pol, []byte(`permit(principal, action, resource);
@approval("required")
permit(principal, action, resource == Tool::"write");
`), 0o600); err != nil {
		t.Fatal(err)
	}
	var regs []pb.RegistryServiceClient
	for i, name := range []string{"a", "b"} {
		cfg := fmt.Sprintf(`{"skills": [], "debug": true, "builtins": {"tools": {"bash": false, "webfetch": false}},
  "codeMode": {"enabled": true, "timeoutMs": 10000},
  "cluster": {"redis": {"url": %q, "timeout": 2000}},
  "auth": {"tokens": [{"name": "alice", "token": %q}, {"name": "bob", "token": %q}, {"name": "reviewer", "token": %q}]},
  "policy": {"files": [%q], "approvers": ["reviewer"]},
  "audit": {"path": %q},
  "mcpServers": {"up": {"url": %q}}}`, srv.URL, aliceSecret, bobSecret, reviewerSecret, pol, filepath.Join(dir, "audit-"+name+".log"), upstream)
		conn := dialGRPC(t, startReplicaWithConfig(t, t.Name(), name, cfg).grpc)
		regs = append(regs, pb.NewRegistryServiceClient(conn))
		apr[i] = pb.NewApprovalServiceClient(conn)
	}
	return regs[0], regs[1], apr
}

func execOnReplica(t *testing.T, c pb.RegistryServiceClient, token, name, args string, ans *pb.Answer) *pb.ToolResult {
	t.Helper()
	resp, err := c.Execute(bearer(token), &pb.ExecuteRequest{Name: name, Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: args}, Answer: ans})
	if err != nil {
		t.Fatalf("Execute %s: gRPC error %v; tool failures must be results", name, err)
	}
	return resp.GetResult()
}

func TestSuspendedCallsResumeOnAnotherReplica(t *testing.T) {
	runReplicaMain()
	dir := t.TempDir()
	a, b, apr := suspendReplicas(t, testutil.StartRedis(t), modernUpstream(t), dir)

	t.Run("run_code suspended on an approval", func(t *testing.T) {
		code := jsonString(`const e = tools.debug_echo({step: 1}); const w = tools.write({path: "out.txt", content: "x"}); [e.step, w]`)
		args := `{"code": ` + code + `}`
		p := pendingOf(t, execOnReplica(t, a, aliceSecret, "run_code", args, nil), "approval")           // A
		early := execOnReplica(t, b, aliceSecret, "run_code", args, &pb.Answer{Id: p.GetId(), Ok: true}) // B
		if !early.GetIsError() || !strings.Contains(early.GetOutput(), "still pending") {
			t.Fatalf("resumed on B before the decision: %v", early)
		}
		if _, err := apr[0].Approve(bearer(reviewerSecret), &pb.ApproveRequest{Id: p.GetId()}); err != nil { // A
			t.Fatal(err)
		}
		r := execOnReplica(t, b, aliceSecret, "run_code", args, &pb.Answer{Id: p.GetId(), Ok: true}) // B
		if r.GetIsError() || !strings.HasPrefix(r.GetOutput(), `[1,"Wrote 1 bytes to out.txt`) {
			t.Fatalf("resumed on B after the approval on A: %v", r)
		}
		if n := auditCount(t, dir, `"tool":"debug_echo"`); n != 1 {
			t.Fatalf("debug_echo ran %d times across the replicas; a suspended script's earlier calls run once", n)
		}
	})

	t.Run("two principals, the same script, the same question", func(t *testing.T) {
		code := jsonString(`const a = tools.question({questions: [{question: "Which color?"}]}); "color: " + a["Which color?"]`)
		args := `{"code": ` + code + `}`
		qa := pendingOf(t, execOnReplica(t, a, aliceSecret, "run_code", args, nil), "question") // A
		qb := pendingOf(t, execOnReplica(t, b, bobSecret, "run_code", args, nil), "question")   // B
		answer := func(id, color string) *pb.Answer {
			return &pb.Answer{Id: id, Ok: true, Data: value(t, map[string]any{"Which color?": color})}
		}
		if r := execOnReplica(t, a, bobSecret, "run_code", args, answer(qb.GetId(), "blue")); r.GetIsError() || r.GetOutput() != `"color: blue"` { // A
			t.Fatalf("bob, suspended on B, resumed on A: %v", r)
		}
		if r := execOnReplica(t, b, aliceSecret, "run_code", args, answer(qa.GetId(), "red")); r.GetIsError() || r.GetOutput() != `"color: red"` { // B
			t.Fatalf("alice, suspended on A, resumed on B: %v", r)
		}
	})

	t.Run("an upstream's 2026-07-28 input_required", func(t *testing.T) {
		p := pendingOf(t, execOnReplica(t, a, aliceSecret, "up_confirm", `{"x": 1, "y": 2}`, nil), "elicitation") // A
		ans := &pb.Answer{Id: p.GetId(), Ok: true, Data: value(t, map[string]any{"reason": "tested"})}
		if r := execOnReplica(t, b, bobSecret, "up_confirm", `{"x": 1, "y": 2}`, ans); !r.GetIsError() || !strings.Contains(r.GetOutput(), "no pending request has this id") { // B
			t.Fatalf("another principal answered it: %v", r)
		}
		if r := execOnReplica(t, a, aliceSecret, "up_confirm", `{"x": 1, "y": 3}`, ans); !r.GetIsError() || !strings.Contains(r.GetOutput(), "same tool name and arguments") { // A
			t.Fatalf("answered with other arguments: %v", r)
		}
		if r := execOnReplica(t, b, aliceSecret, "up_confirm", `{"y": 2, "x": 1}`, ans); r.GetIsError() || !strings.Contains(r.GetOutput(), "acted: accept tested") { // B
			t.Fatalf("asked on A, answered on B: %v", r)
		}
	})
}

// jsonString is s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s) // a string always encodes
	return string(b)
}

// auditCount counts the audit lines of every replica in dir containing s.
func auditCount(t *testing.T, dir, s string) int {
	t.Helper()
	logs, err := filepath.Glob(filepath.Join(dir, "audit-*.log"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("no audit logs in %s: %v", dir, err)
	}
	n := 0
	for _, l := range logs {
		b, err := os.ReadFile(l)
		if err != nil {
			t.Fatal(err)
		}
		n += strings.Count(string(b), s)
	}
	return n
}
