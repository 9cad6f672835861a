package server_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
)

// nodeA2AAgent runs pkg/sources/a2a/testdata/agent.mjs, a real agent on
// the official @a2a-js/sdk, and returns its card URL. Without node or the
// npm packages the test is skipped, unless TOOLNEXUS_REQUIRE_E2E=1.
func nodeA2AAgent(t *testing.T, proto string, extra ...string) string {
	t.Helper()
	nodeDir, err := filepath.Abs(filepath.Join("..", "..", "e2e", "node"))
	if err != nil {
		t.Fatal(err)
	}
	node, nodeErr := exec.LookPath("node")
	_, pkgErr := os.Stat(filepath.Join(nodeDir, "node_modules", "@a2a-js", "sdk", "package.json"))
	if nodeErr != nil || pkgErr != nil {
		if os.Getenv("TOOLNEXUS_REQUIRE_E2E") == "1" {
			t.Fatalf("node or e2e/node/node_modules/@a2a-js/sdk missing; TOOLNEXUS_REQUIRE_E2E=1 requires them (run npm ci in e2e/node)")
		}
		t.Skip("node or e2e/node/node_modules/@a2a-js/sdk missing; skipping the real-agent test")
	}
	cmd := exec.Command(node, append([]string{filepath.Join("..", "sources", "a2a", "testdata", "agent.mjs"), nodeDir, proto}, extra...)...)
	return testutil.StartListening(t, cmd, 30*time.Second) + "/.well-known/agent-card.json"
}

// a2aPending serves a real A2A agent (protocol 1.0) to two principals.
func a2aPending(t *testing.T, limits string, agentArgs ...string) *fixture {
	t.Helper()
	card := nodeA2AAgent(t, "1.0", agentArgs...)
	t.Setenv("TN_ALICE", aliceSecret)
	t.Setenv("TN_MALLORY", mallorySecret)
	return start(t, fmt.Sprintf(`{"builtins": false, "skills": [], "limits": {%s},
		"auth": {"tokens": [{"name": "alice", "token": "${TN_ALICE}"}, {"name": "mallory", "token": "${TN_MALLORY}"}]},
		"agents": {"node": {"card": %q, "timeout": 20000, "pollEvery": 10}}}`, limits, card))
}

// TestA2AInputOverGRPC: an A2A agent that asks for input (input-required)
// suspends the call: the gRPC caller gets OUTCOME_PENDING kind "input"
// with the agent's question, another principal cannot answer it, and the
// owner's answer goes to the agent as the task's next message; the task
// completes with it. A declined request cancels the task and says so.
func TestA2AInputOverGRPC(t *testing.T) {
	f := a2aPending(t, "")
	alice, mallory := bearer(aliceSecret), bearer(mallorySecret)
	const name, args = "Node_Agent_1_0_echo", `{"task": "ask which file should I review?"}`

	p := pendingOf(t, execAs(t, alice, f, name, args, nil), "input")
	if p.GetPrompt() != "which file should I review?" || p.GetData().GetFields()["state"].GetStringValue() != "input-required" {
		t.Fatalf("pending = %v", p)
	}
	stolen := execAs(t, mallory, f, name, args, &pb.Answer{Id: p.GetId(), Ok: true, Data: value(t, "mallory.go")})
	if !stolen.GetIsError() || !strings.Contains(stolen.GetOutput(), "no pending request has this id") {
		t.Fatalf("another principal answered: %v", stolen)
	}
	r := execAs(t, alice, f, name, args, &pb.Answer{Id: p.GetId(), Ok: true, Data: value(t, "main.go")})
	if r.GetIsError() || r.GetOutcome() != pb.Outcome_OUTCOME_OK || r.GetOutput() != "answer: main.go" {
		t.Fatalf("answered: %v", r)
	}

	p = pendingOf(t, execAs(t, alice, f, name, args, nil), "input")
	r = execAs(t, alice, f, name, args, &pb.Answer{Id: p.GetId(), Ok: false, Reason: "not now"})
	if !r.GetIsError() || !strings.Contains(r.GetOutput(), "the caller declined the agent's request for input; the task was canceled on the agent") {
		t.Fatalf("declined: %v", r)
	}
}

// TestA2AInputExpiryOverGRPC: limits.pendingTimeout ends an unanswered
// request; the late answer is refused as expired.
func TestA2AInputExpiryOverGRPC(t *testing.T) {
	f := a2aPending(t, `"pendingTimeout": 300`)
	alice := bearer(aliceSecret)
	const name, args = "Node_Agent_1_0_echo", `{"task": "ask proceed?"}`
	p := pendingOf(t, execAs(t, alice, f, name, args, nil), "input")
	waitUntilPast(t, p.GetExpiresAt().AsTime())
	r := execAs(t, alice, f, name, args, &pb.Answer{Id: p.GetId(), Ok: true, Data: value(t, "yes")})
	if !r.GetIsError() || !strings.Contains(r.GetOutput(), "expired") {
		t.Fatalf("late answer: %v", r)
	}
}

// TestA2AInputOverExecuteStream: with an agent that streams, ExecuteStream
// follows the task over message/stream, sends the agent's question as a
// pending event and ends with the PENDING result; the answer, on a second
// stream, continues the same task, streamed too, to its completion.
func TestA2AInputOverExecuteStream(t *testing.T) {
	f := a2aPending(t, "", "stream")
	alice := bearer(aliceSecret)
	const name, args = "Node_Agent_1_0_echo", `{"task": "ask which branch?"}`
	events := func(ans *pb.Answer) ([]*pb.ExecuteEvent, *pb.ToolResult) {
		return streamAs(t, alice, f, name, args, ans)
	}
	evs, last := events(nil)
	if len(evs) == 0 {
		t.Fatalf("no pending event before %v", last)
	}
	pendingEv := evs[len(evs)-1].GetPending()
	p := pendingOf(t, last, "input")
	if pendingEv == nil || pendingEv.GetId() != p.GetId() || p.GetPrompt() != "which branch?" {
		t.Fatalf("pending event %v, result %v", pendingEv, last)
	}
	if _, r := events(&pb.Answer{Id: p.GetId(), Ok: true, Data: value(t, "main")}); r.GetIsError() || r.GetOutput() != "answer: main" {
		t.Fatalf("answered over a stream: %v", r)
	}
}
