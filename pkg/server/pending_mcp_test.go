package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

const (
	aliceSecret   = "alice-secret-token-0123456789"
	mallorySecret = "mallory-secret-token-0123456789"
)

// everythingPending serves server-everything to two principals.
func everythingPending(t *testing.T, limits string) *fixture {
	t.Helper()
	entry := everythingServer(t)
	t.Setenv("TN_ALICE", aliceSecret)
	t.Setenv("TN_MALLORY", mallorySecret)
	return start(t, fmt.Sprintf(`{"builtins": false, "skills": [], "limits": {%s},
		"auth": {"tokens": [{"name": "alice", "token": "${TN_ALICE}"}, {"name": "mallory", "token": "${TN_MALLORY}"}]},
		"mcpServers": {"everything": {"command": "node", "args": [%q, "stdio"], "timeout": 60000}}}`, limits, entry))
}

func execAs(t *testing.T, ctx context.Context, f *fixture, name, args string, ans *pb.Answer) *pb.ToolResult {
	t.Helper()
	resp, err := f.reg.Execute(ctx, &pb.ExecuteRequest{Name: name, Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: args}, Answer: ans})
	if err != nil {
		t.Fatalf("Execute(%s): gRPC error %v; tool failures must be results", name, err)
	}
	return resp.GetResult()
}

// streamAs is execAs over ExecuteStream: the events before the result, and
// the result.
func streamAs(t *testing.T, ctx context.Context, f *fixture, name, args string, ans *pb.Answer) ([]*pb.ExecuteEvent, *pb.ToolResult) {
	t.Helper()
	st, err := f.reg.ExecuteStream(ctx, &pb.ExecuteRequest{Name: name, Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: args}, Answer: ans})
	if err != nil {
		t.Fatal(err)
	}
	return collect(t, st)
}

func pendingOf(t *testing.T, r *pb.ToolResult, kind string) *pb.PendingRequest {
	t.Helper()
	p := r.GetPending()
	if r.GetOutcome() != pb.Outcome_OUTCOME_PENDING || p.GetKind() != kind || p.GetId() == "" || p.GetExpiresAt() == nil {
		t.Fatalf("want a pending %s request, got %v", kind, r)
	}
	return p
}

func value(t *testing.T, v any) *structpb.Value {
	t.Helper()
	pv, err := structpb.NewValue(v)
	if err != nil {
		t.Fatal(err)
	}
	return pv
}

// TestEverythingElicitationOverGRPC: server-everything asks for input
// mid-call; the gRPC caller gets OUTCOME_PENDING with the server's message
// and requestedSchema, another principal's attempt to answer it is refused
// as unknown over the wire, a schema mismatch is an error the caller can
// correct, and the answer's content comes back in the result.
func TestEverythingElicitationOverGRPC(t *testing.T) {
	f := everythingPending(t, "")
	alice, mallory := bearer(aliceSecret), bearer(mallorySecret)
	const name = "everything_trigger-elicitation-request"

	p := pendingOf(t, execAs(t, alice, f, name, `{}`, nil), "elicitation")
	if p.GetPrompt() != "Please provide inputs for the following fields:" || p.GetData().GetFields()["requestedSchema"] == nil {
		t.Fatalf("pending = %v", p)
	}
	// Mallory knows the id (say it leaked) and answers for Alice.
	stolen := execAs(t, mallory, f, name, `{}`, &pb.Answer{Id: p.GetId(), Ok: true, Data: value(t, map[string]any{"name": "Mallory"})})
	if !stolen.GetIsError() || !strings.Contains(stolen.GetOutput(), "no pending request") {
		t.Fatalf("another principal answered: %v", stolen)
	}
	bad := execAs(t, alice, f, name, `{}`, &pb.Answer{Id: p.GetId(), Ok: true, Data: value(t, map[string]any{"integer": 500})})
	if !bad.GetIsError() || bad.GetOutcome() == pb.Outcome_OUTCOME_PENDING || !strings.Contains(bad.GetOutput(), "requestedSchema") {
		t.Fatalf("mismatching answer: %v", bad)
	}
	r := execAs(t, alice, f, name, `{}`, &pb.Answer{Id: p.GetId(), Ok: true, Data: value(t, map[string]any{"name": "Ada Lovelace", "integer": 7})})
	if r.GetIsError() || !strings.Contains(r.GetOutput(), "- Name: Ada Lovelace") || !strings.Contains(r.GetOutput(), "Favorite Integer: 7") {
		t.Fatalf("answered: %v", r)
	}
	if strings.Contains(r.GetOutput(), "Mallory") {
		t.Fatalf("mallory's answer reached the server: %v", r)
	}

	// A decline reaches the server as one.
	p = pendingOf(t, execAs(t, alice, f, name, `{}`, nil), "elicitation")
	r = execAs(t, alice, f, name, `{}`, &pb.Answer{Id: p.GetId(), Ok: false, Reason: "no"})
	if r.GetIsError() || !strings.Contains(r.GetOutput(), "User declined") {
		t.Fatalf("declined: %v", r)
	}
}

// TestEverythingSamplingOverGRPC: the server asks the caller's model for a
// completion; the completion the caller sends comes back in the result.
func TestEverythingSamplingOverGRPC(t *testing.T) {
	f := everythingPending(t, "")
	alice := bearer(aliceSecret)
	const name = "everything_trigger-sampling-request"
	args := `{"prompt": "what is 6*7?", "maxTokens": 50}`
	p := pendingOf(t, execAs(t, alice, f, name, args, nil), "sampling")
	if !strings.Contains(p.GetPrompt(), "what is 6*7?") || p.GetData().GetFields()["messages"] == nil {
		t.Fatalf("pending = %v", p)
	}
	completion := map[string]any{"role": "assistant", "model": "caller-model", "content": map[string]any{"type": "text", "text": "forty-two"}}
	r := execAs(t, alice, f, name, args, &pb.Answer{Id: p.GetId(), Ok: true, Data: value(t, completion)})
	if r.GetIsError() || !strings.Contains(r.GetOutput(), "forty-two") {
		t.Fatalf("answered: %v", r)
	}
}

// TestEverythingExpiryOverGRPC: limits.pendingTimeout ends an unanswered
// request: the server hears a cancel (its result says so on the next
// call's side) and the late answer is refused as expired.
func TestEverythingExpiryOverGRPC(t *testing.T) {
	f := everythingPending(t, `"pendingTimeout": 300`)
	alice := bearer(aliceSecret)
	const name = "everything_trigger-elicitation-request"
	p := pendingOf(t, execAs(t, alice, f, name, `{}`, nil), "elicitation")
	late := p.GetExpiresAt().AsTime()
	waitUntilPast(t, late)
	r := execAs(t, alice, f, name, `{}`, &pb.Answer{Id: p.GetId(), Ok: true, Data: value(t, map[string]any{"name": "Late"})})
	if !r.GetIsError() || !strings.Contains(r.GetOutput(), "expired") {
		t.Fatalf("late answer: %v", r)
	}
}

// waitUntilPast waits for the wall clock to pass t: the expiry is a point in
// time, so the test waits for the clock, not for a goroutine.
func waitUntilPast(t *testing.T, at time.Time) {
	t.Helper()
	time.Sleep(time.Until(at) + time.Millisecond)
}

// TestEverythingPendingOverExecuteStream: ExecuteStream emits the server's
// request as a pending event and ends with the PENDING result carrying the
// same request; the answer, sent on a second stream, finishes the call.
func TestEverythingPendingOverExecuteStream(t *testing.T) {
	f := everythingPending(t, "")
	alice := bearer(aliceSecret)
	const name = "everything_trigger-elicitation-request"
	events := func(ans *pb.Answer) ([]*pb.ExecuteEvent, *pb.ToolResult) {
		return streamAs(t, alice, f, name, `{}`, ans)
	}
	evs, last := events(nil)
	if len(evs) == 0 {
		t.Fatalf("no pending event before %v", last)
	}
	pendingEv := evs[len(evs)-1].GetPending()
	p := pendingOf(t, last, "elicitation")
	if pendingEv == nil || pendingEv.GetId() != p.GetId() || pendingEv.GetPrompt() != p.GetPrompt() {
		t.Fatalf("pending event %v, result %v", pendingEv, last)
	}
	_, r := events(&pb.Answer{Id: p.GetId(), Ok: true, Data: value(t, map[string]any{"name": "Grace Hopper"})})
	if r.GetIsError() || !strings.Contains(r.GetOutput(), "- Name: Grace Hopper") {
		t.Fatalf("answered over a stream: %v", r)
	}
}
