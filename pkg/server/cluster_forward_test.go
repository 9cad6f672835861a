package server_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/server"
)

// elicitReplicas starts two replica processes sharing srv, each serving
// server-everything over stdio to alice.
func elicitReplicas(t *testing.T, srv *testutil.RedisServer) (owner, other *replicaProc) {
	t.Helper()
	runReplicaMain()
	entry := everythingServer(t)
	cfg := fmt.Sprintf(`{"skills": [], "builtins": false,
  "cluster": {"name": "test", "redis": {"url": %q, "timeout": 2000}},
  "auth": {"tokens": [{"name": "alice", "token": %q}, {"name": "mallory", "token": %q}]},
  "mcpServers": {"everything": {"command": "node", "args": [%q, "stdio"], "timeout": 60000}}}`, srv.URL, aliceSecret, mallorySecret, entry)
	owner = startReplicaWithConfig(t, t.Name(), "owner", cfg)
	other = startReplicaWithConfig(t, t.Name(), "other", cfg)
	return owner, other
}

func execOn(t *testing.T, c pb.RegistryServiceClient, args string, ans *pb.Answer) *pb.ToolResult {
	t.Helper()
	resp, err := c.Execute(bearer(aliceSecret), &pb.ExecuteRequest{Name: "everything_trigger-elicitation-request",
		Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: args}, Answer: ans})
	if err != nil {
		t.Fatalf("Execute: gRPC error %v; tool failures must be results", err)
	}
	return resp.GetResult()
}

// An elicitation server-everything (stdio) asks through one replica is
// answered on another: the answer is forwarded to the replica whose stdio
// connection holds the request, and the server's result comes back to the
// caller on the replica it called. The forwarded answer's round trip is
// logged beside the same answer given on the owning replica itself.
func TestElicitationAnsweredOnAnotherReplica(t *testing.T) {
	t.Parallel()
	runReplicaMain() // first: a replica process must not start the test's redis-server, whose cleanup it never runs
	owner, other := elicitReplicas(t, testutil.StartRedis(t))
	onOwner := pb.NewRegistryServiceClient(dialGRPC(t, owner.grpc))
	onOther := pb.NewRegistryServiceClient(dialGRPC(t, other.grpc))
	answer := func(id string) *pb.Answer {
		return &pb.Answer{Id: id, Ok: true, Data: value(t, map[string]any{"name": "Ada Lovelace", "integer": 7})}
	}

	var local, forwarded []time.Duration
	for i := range 20 {
		p := pendingOf(t, execOn(t, onOwner, `{}`, nil), "elicitation")
		at, via := onOther, &forwarded
		if i%2 == 1 {
			at, via = onOwner, &local
		}
		start := time.Now()
		r := execOn(t, at, `{}`, answer(p.GetId()))
		*via = append(*via, time.Since(start))
		if r.GetIsError() || !strings.Contains(r.GetOutput(), "- Name: Ada Lovelace") || !strings.Contains(r.GetOutput(), "Favorite Integer: 7") {
			t.Fatalf("answer %d (forwarded %v): %v\nowner log:\n%s", i, at == onOther, r, owner.logText())
		}
	}
	t.Logf("answer round trip p50: on the owning replica %v, forwarded from another replica %v", p50(local), p50(forwarded))

	t.Run("checked like a local answer", func(t *testing.T) {
		p := pendingOf(t, execOn(t, onOwner, `{}`, nil), "elicitation")
		// Mallory has the id (say it leaked) and answers for Alice through
		// the other replica: refused there as unknown, never forwarded.
		resp, err := onOther.Execute(bearer(mallorySecret), &pb.ExecuteRequest{Name: "everything_trigger-elicitation-request",
			Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{}`}, Answer: &pb.Answer{Id: p.GetId(), Ok: true, Data: value(t, map[string]any{"name": "Mallory"})}})
		if err != nil || !resp.GetResult().GetIsError() || !strings.Contains(resp.GetResult().GetOutput(), "no pending request has this id") {
			t.Fatalf("another principal answered through another replica: %v, %v", resp, err)
		}
		bad := execOn(t, onOther, `{}`, &pb.Answer{Id: p.GetId(), Ok: true, Data: value(t, map[string]any{"integer": 500})})
		if !bad.GetIsError() || !strings.Contains(bad.GetOutput(), "requestedSchema") {
			t.Fatalf("a mismatching answer forwarded: %v", bad)
		}
		wrongArgs := execOn(t, onOther, `{"x": 1}`, answer(p.GetId()))
		if !wrongArgs.GetIsError() || !strings.Contains(wrongArgs.GetOutput(), "same tool name and arguments") {
			t.Fatalf("an answer with other arguments: %v", wrongArgs)
		}
		if r := execOn(t, onOther, `{}`, answer(p.GetId())); r.GetIsError() || !strings.Contains(r.GetOutput(), "Ada Lovelace") || strings.Contains(r.GetOutput(), "Mallory") {
			t.Fatalf("the corrected answer: %v", r)
		}
	})
}

// kill -9 the replica holding an elicitation: the answer given on another
// replica gets at once an is_error saying that replica is gone and to
// call again — never a hang.
func TestElicitationOwnerKilledAnswerSaysGone(t *testing.T) {
	t.Parallel()
	runReplicaMain() // first: a replica process must not start the test's redis-server, whose cleanup it never runs
	owner, other := elicitReplicas(t, testutil.StartRedis(t))
	onOther := pb.NewRegistryServiceClient(dialGRPC(t, other.grpc))
	p := pendingOf(t, execOn(t, pb.NewRegistryServiceClient(dialGRPC(t, owner.grpc)), `{}`, nil), "elicitation")
	owner.kill(t)
	start := time.Now()
	ctx, cancel := context.WithTimeout(bearer(aliceSecret), 5*time.Second)
	defer cancel()
	resp, err := onOther.Execute(ctx, &pb.ExecuteRequest{Name: "everything_trigger-elicitation-request",
		Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{}`}, Answer: &pb.Answer{Id: p.GetId(), Ok: true, Data: value(t, map[string]any{"name": "Ada"})}})
	took := time.Since(start)
	if err != nil {
		t.Fatalf("Execute: %v after %v", err, took)
	}
	r := resp.GetResult()
	if !r.GetIsError() || !strings.Contains(r.GetOutput(), "replica holding this pending request is gone") || !strings.Contains(r.GetOutput(), "call the tool again") {
		t.Fatalf("answer after the owner was killed: %v", r)
	}
	if took > time.Second {
		t.Fatalf("the is_error came after %v, want within a second", took)
	}
	t.Logf("owner gone reported after %v", took)
}

func p50(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// An A2A agent's request for input, asked through one replica, answered
// on another: the answer is forwarded to the replica holding the task's
// wait, which sends it to the agent; the completed task comes back.
func TestA2AInputAnsweredOnAnotherReplica(t *testing.T) {
	srv := testutil.StartRedis(t)
	card := nodeA2AAgent(t, "1.0")
	cfg := fmt.Sprintf(`{"builtins": false, "skills": [],
  "cluster": {"name": "test", "redis": {"url": %q, "timeout": 2000}},
  "auth": {"tokens": [{"name": "alice", "token": %q}]},
  "agents": {"node": {"card": %q, "timeout": 20000, "pollEvery": 10}}}`, srv.URL, aliceSecret, card)
	var reps []pb.RegistryServiceClient
	for range 2 {
		s, _, _ := launch(t, cfg, func(o *server.Options) { o.MetricsListen = "-" })
		reps = append(reps, pb.NewRegistryServiceClient(dialGRPC(t, s.Addr().String())))
	}
	const name, args = "Node_Agent_1_0_echo", `{"task": "ask which file should I review?"}`
	run := func(c pb.RegistryServiceClient, ans *pb.Answer) *pb.ToolResult {
		resp, err := c.Execute(bearer(aliceSecret), &pb.ExecuteRequest{Name: name, Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: args}, Answer: ans})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetResult()
	}
	p := pendingOf(t, run(reps[0], nil), "input")
	r := run(reps[1], &pb.Answer{Id: p.GetId(), Ok: true, Data: value(t, "main.go")})
	if r.GetIsError() || r.GetOutcome() != pb.Outcome_OUTCOME_OK || r.GetOutput() != "answer: main.go" {
		t.Fatalf("answered on the other replica: %v", r)
	}
}

// Redis paused (SIGSTOP: its connections stay open, nothing answers)
// while an elicitation waits: an answer given on either replica is told
// the store cannot be reached and to retry — not that the request is
// unknown or expired, which would have the caller start over — and the
// same answer works once Redis goes on (SIGCONT).
func TestAnswerWhileRedisIsPausedIsToldToRetry(t *testing.T) {
	t.Parallel()
	runReplicaMain() // first: a replica process must not start the test's redis-server, whose cleanup it never runs
	srv := testutil.StartRedis(t)
	owner, other := elicitReplicas(t, srv)
	onOwner := pb.NewRegistryServiceClient(dialGRPC(t, owner.grpc))
	onOther := pb.NewRegistryServiceClient(dialGRPC(t, other.grpc))
	p := pendingOf(t, execOn(t, onOwner, `{}`, nil), "elicitation")
	answer := &pb.Answer{Id: p.GetId(), Ok: true, Data: value(t, map[string]any{"name": "Ada Lovelace", "integer": 7})}

	srv.Pause()
	for _, at := range []struct {
		name string
		c    pb.RegistryServiceClient
	}{{"owner", onOwner}, {"other", onOther}, {"owner again", onOwner}} {
		r := execOn(t, at.c, `{}`, answer)
		text := r.GetOutput()
		if !r.GetIsError() || !strings.Contains(text, "retry later") ||
			strings.Contains(text, "no pending request") || strings.Contains(text, "expired") || strings.Contains(text, "call the tool again") {
			t.Fatalf("answer on the %s while Redis is paused: %v", at.name, r)
		}
		t.Logf("answer on the %s while Redis is paused: %s", at.name, text)
	}
	srv.Resume()

	deadline := time.Now().Add(15 * time.Second)
	for {
		r := execOn(t, onOwner, `{}`, answer)
		if !r.GetIsError() && strings.Contains(r.GetOutput(), "- Name: Ada Lovelace") {
			break
		}
		if !strings.Contains(r.GetOutput(), "retry later") || time.Now().After(deadline) {
			t.Fatalf("the answer once Redis is back: %v\nowner log:\n%s", r, owner.logText())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
