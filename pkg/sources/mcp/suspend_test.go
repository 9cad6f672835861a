package mcp_test

import (
	"encoding/json"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/suspend/pending"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/mcp"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// everything starts server-everything over stdio with extra server keys,
// or skips when the npm package is not installed (fails under
// TOOLNEXUS_REQUIRE_E2E=1).
func everything(t *testing.T, env sources.Env, extra map[string]any) *registry.Registry {
	t.Helper()
	bin, err := filepath.Abs(everythingBin)
	if err == nil {
		_, err = os.Stat(bin)
	}
	if err != nil {
		if os.Getenv("TOOLNEXUS_REQUIRE_E2E") == "1" {
			t.Fatalf("TOOLNEXUS_REQUIRE_E2E=1 but the server is missing (run npm ci --prefix e2e/node): %v", err)
		}
		t.Skipf("@modelcontextprotocol/server-everything not installed (npm ci --prefix e2e/node): %v", err)
	}
	cfg := map[string]any{"command": bin, "args": []string{"stdio"}}
	for k, v := range extra {
		cfg[k] = v
	}
	raw, _ := json.Marshal(map[string]any{"everything": cfg})
	servers, _, err := mcp.ParseConfig(raw)
	if err != nil {
		t.Fatal(err)
	}
	reg, _ := startEnv(t, "everything", servers["everything"], env)
	return reg
}

var alice = tool.Owner{Principal: "alice", Session: "s1"}

func run(t *testing.T, reg *registry.Registry, owner tool.Owner, name, args string, ans *tool.Answer) tool.Result {
	t.Helper()
	return (testutil.Direct{Reg: reg}).Execute(t.Context(), name, tool.Call{Arguments: json.RawMessage(args), Owner: owner, Answer: ans})
}

func mustPend(t *testing.T, r tool.Result, kind string) *tool.Pending {
	t.Helper()
	if r.Outcome != tool.OutcomePending || r.Pending == nil || r.Pending.Kind != kind || r.Pending.ID == "" {
		t.Fatalf("want a pending %s request, got %+v", kind, r)
	}
	return r.Pending
}

// TestEverythingElicitation: server-everything's trigger-elicitation-request
// appears (the capability is declared), suspends with the server's message
// and requestedSchema, refuses an answer that does not match the schema
// (the request stays open), and finishes with the answer's content in the
// result.
func TestEverythingElicitation(t *testing.T) {
	t.Parallel()
	reg := everything(t, sources.Env{}, nil)
	const name = "everything_trigger-elicitation-request"
	if !slices.Contains(names(reg.Snapshot()), name) {
		t.Fatalf("%s missing: elicitation was not declared (%v)", name, names(reg.Snapshot()))
	}
	p := mustPend(t, run(t, reg, alice, name, `{}`, nil), mcp.KindElicitation)
	if p.Prompt != "Please provide inputs for the following fields:" || p.Data["requestedSchema"] == nil || p.ExpiresAt.IsZero() {
		t.Fatalf("pending = %+v", p)
	}

	// Missing the required "name": refused here, the request stays open.
	bad := run(t, reg, alice, name, `{}`, &tool.Answer{ID: p.ID, OK: true, Data: map[string]any{"check": true}})
	if !bad.IsError || bad.Outcome == tool.OutcomePending || !strings.Contains(bad.Output, "requestedSchema") {
		t.Fatalf("mismatching answer: %+v", bad)
	}
	// Another principal cannot answer it, nor the same one for other arguments.
	if r := run(t, reg, tool.Owner{Principal: "mallory", Session: "s1"}, name, `{}`, &tool.Answer{ID: p.ID, OK: true, Data: map[string]any{"name": "Mallory"}}); !r.IsError || !strings.Contains(r.Output, "no pending request") {
		t.Fatalf("another principal's answer: %+v", r)
	}
	if r := run(t, reg, tool.Owner{Principal: "alice", Session: "s2"}, name, `{}`, &tool.Answer{ID: p.ID, OK: true, Data: map[string]any{"name": "Mallory"}}); !r.IsError || !strings.Contains(r.Output, "no pending request") {
		t.Fatalf("another session's answer: %+v", r)
	}
	if r := run(t, reg, alice, name, `{"x":1}`, &tool.Answer{ID: p.ID, OK: true, Data: map[string]any{"name": "Ada"}}); !r.IsError || !strings.Contains(r.Output, "same tool name and arguments") {
		t.Fatalf("answer with other arguments: %+v", r)
	}

	r := run(t, reg, alice, name, `{ }`, &tool.Answer{ID: p.ID, OK: true, Data: map[string]any{"name": "Ada Lovelace", "check": true}})
	if r.IsError || !strings.Contains(r.Output, "- Name: Ada Lovelace") || !strings.Contains(r.Output, `"action": "accept"`) {
		t.Fatalf("answered: %+v", r)
	}
	// Answered once: the id is spent.
	if r := run(t, reg, alice, name, `{}`, &tool.Answer{ID: p.ID, OK: true, Data: map[string]any{"name": "Ada"}}); !r.IsError || !strings.Contains(r.Output, "no pending request") {
		t.Fatalf("second answer: %+v", r)
	}
}

// TestEverythingElicitationDecline: ok false reaches the server as a decline.
func TestEverythingElicitationDecline(t *testing.T) {
	t.Parallel()
	reg := everything(t, sources.Env{}, nil)
	const name = "everything_trigger-elicitation-request"
	p := mustPend(t, run(t, reg, alice, name, `{}`, nil), mcp.KindElicitation)
	r := run(t, reg, alice, name, `{}`, &tool.Answer{ID: p.ID, OK: false, Reason: "not now"})
	if r.IsError || !strings.Contains(r.Output, "User declined") {
		t.Fatalf("declined: %+v", r)
	}
}

// TestEverythingSampling: trigger-sampling-request suspends with the
// server's messages, and the caller's completion comes back in the result.
func TestEverythingSampling(t *testing.T) {
	t.Parallel()
	reg := everything(t, sources.Env{}, nil)
	const name = "everything_trigger-sampling-request"
	args := `{"prompt":"say hi","maxTokens":20}`
	p := mustPend(t, run(t, reg, alice, name, args, nil), mcp.KindSampling)
	if !strings.Contains(p.Prompt, "say hi") || p.Data["systemPrompt"] != "You are a helpful test server." || p.Data["maxTokens"] != float64(20) {
		t.Fatalf("pending = %+v", p)
	}
	if r := run(t, reg, alice, name, args, &tool.Answer{ID: p.ID, OK: true, Data: map[string]any{"content": "not a content block"}}); !r.IsError || !strings.Contains(r.Output, "CreateMessageResult") {
		t.Fatalf("malformed completion: %+v", r)
	}
	completion := map[string]any{"role": "assistant", "model": "test-model", "content": map[string]any{"type": "text", "text": "hi from the caller's model"}}
	r := run(t, reg, alice, name, args, &tool.Answer{ID: p.ID, OK: true, Data: completion})
	if r.IsError || !strings.Contains(r.Output, "hi from the caller's model") || !strings.Contains(r.Output, "test-model") {
		t.Fatalf("answered: %+v", r)
	}
}

// TestEverythingExpiry: an unanswered request ends at limits.pendingTimeout;
// the server hears a cancel, and the late answer is refused as expired.
func TestEverythingExpiry(t *testing.T) {
	t.Parallel()
	store := pending.NewLocal(pending.Limits{Timeout: 200 * time.Millisecond})
	reg := everything(t, sources.Env{Pending: store}, nil)
	const name = "everything_trigger-elicitation-request"
	p := mustPend(t, run(t, reg, alice, name, `{}`, nil), mcp.KindElicitation)
	// The expiry is a point in time: wait for the clock, not a goroutine.
	time.Sleep(time.Until(p.ExpiresAt) + time.Millisecond)
	r := run(t, reg, alice, name, `{}`, &tool.Answer{ID: p.ID, OK: true, Data: map[string]any{"name": "Late"}})
	if !r.IsError || !strings.Contains(r.Output, "expired") {
		t.Fatalf("late answer: %+v", r)
	}
}

// TestEverythingOptOut: "elicitation": false and "sampling": false stop
// declaring the capabilities, so the server hides the tools that need them.
func TestEverythingOptOut(t *testing.T) {
	t.Parallel()
	reg := everything(t, sources.Env{}, map[string]any{"elicitation": false, "sampling": false})
	got := names(reg.Snapshot())
	for _, hidden := range []string{"everything_trigger-elicitation-request", "everything_trigger-sampling-request"} {
		if slices.Contains(got, hidden) {
			t.Fatalf("%s listed although its capability is off", hidden)
		}
	}
	if !slices.Contains(got, "everything_echo") {
		t.Fatalf("echo missing: %v", got)
	}
	if r := run(t, reg, alice, "everything_echo", `{"message":"x"}`, nil); r.IsError {
		t.Fatalf("echo: %+v", r)
	}
}

// TestEverythingMaxPending: limits.maxPending bounds each principal on its
// own, and a call whose server request is refused for it says so: the
// result read "was not answered in time" (sampling) or the server's own
// words for a cancel (elicitation), and only the log named the cap.
func TestEverythingMaxPending(t *testing.T) {
	t.Parallel()
	store := pending.NewLocal(pending.Limits{MaxPerPrincipal: 1})
	reg := everything(t, sources.Env{Pending: store}, nil)
	const name = "everything_trigger-elicitation-request"
	first := mustPend(t, run(t, reg, alice, name, `{}`, nil), mcp.KindElicitation)
	// A second open request for alice is over the cap: the server gets a
	// cancel and the call finishes saying so, with the reason.
	r := run(t, reg, alice, name, `{"n":2}`, nil)
	if r.Outcome == tool.OutcomePending || !strings.Contains(r.Output, "cancelled") {
		t.Fatalf("over the cap: %+v", r)
	}
	const why = "toolnexus declined the server's elicitation request on the caller's behalf: too many pending requests for this caller (limits.maxPending)"
	if !strings.Contains(r.Output, why) {
		t.Errorf("over the cap, the result does not say why:\n%s", r.Output)
	}
	carol := tool.Owner{Principal: "carol"}
	mustPend(t, run(t, reg, carol, "everything_trigger-sampling-request", `{"prompt":"hi"}`, nil), mcp.KindSampling)
	sampled := run(t, reg, carol, "everything_trigger-sampling-request", `{"prompt":"again"}`, nil)
	if sampled.Outcome == tool.OutcomePending || !strings.Contains(sampled.Output, "limits.maxPending") || strings.Contains(sampled.Output, "not answered in time") {
		t.Errorf("a sampling request over the cap: %+v", sampled)
	}
	// Bob has his own allowance.
	mustPend(t, run(t, reg, tool.Owner{Principal: "bob"}, name, `{}`, nil), mcp.KindElicitation)
	if r := run(t, reg, alice, name, `{}`, &tool.Answer{ID: first.ID, OK: false}); r.IsError {
		t.Fatalf("decline: %+v", r)
	}
}
