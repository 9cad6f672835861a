package a2a_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/suspend/pending"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/a2a"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// asker runs calls to one agent tool as one owner.
type asker struct {
	reg   started
	name  string
	owner tool.Owner
}

func (a asker) call(ctx context.Context, task string, ans *tool.Answer) tool.Result {
	return testutil.Direct{Reg: a.reg.reg}.Execute(ctx, a.name, tool.Call{Arguments: taskArgs(task), Owner: a.owner, Answer: ans})
}

func pendingInput(t *testing.T, r tool.Result) *tool.Pending {
	t.Helper()
	if r.Outcome != tool.OutcomePending || r.Pending == nil || r.Pending.Kind != a2a.KindInput || r.Pending.ID == "" || r.Pending.ExpiresAt.IsZero() {
		t.Fatalf("want a pending input request, got %+v", r)
	}
	return r.Pending
}

// A real @a2a-js/sdk agent (both protocol versions, polled and streamed)
// asks for input: the call suspends with the agent's question, another
// owner cannot answer it, an answer of the wrong shape is refused with the
// request left open, and the answer goes to the agent as the next message
// of the same task and context, which then completes with it.
func TestRealAgentAsksForInput(t *testing.T) {
	for _, tc := range []struct{ proto, cardName, mode string }{
		{"1.0", "Node_Agent_1_0", "poll"},
		{"0.3", "Node_Agent_0_3", "poll"},
		{"1.0", "Node_Agent_1_0", "stream"},
		{"0.3", "Node_Agent_0_3", "stream"},
	} {
		t.Run(tc.proto+"/"+tc.mode, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			var agent *nodeAgent
			if tc.mode == "stream" {
				agent = startNodeAgent(t, tc.proto, "stream")
				ctx = tool.WithEvents(ctx, func(tool.Event) {})
			} else {
				agent = startNodeAgent(t, tc.proto)
			}
			store := pending.NewLocal(pending.Limits{Timeout: time.Minute})
			s := startAgent(t, "node", a2a.AgentConfig{Card: agent.cardURL(), Timeout: 20000, PollEvery: 10}, sources.Env{Pending: store})
			if s.err != nil {
				t.Fatalf("Start: %v", s.err)
			}
			alice := asker{reg: s, name: tc.cardName + "_echo", owner: tool.Owner{Principal: "alice", Session: "s1"}}
			mallory := alice
			mallory.owner = tool.Owner{Principal: "mallory", Session: "s1"}
			const task = "ask which file should I review?"

			r := alice.call(ctx, task, nil)
			p := pendingInput(t, r)
			taskID, _ := r.Metadata["taskId"].(string)
			if p.Prompt != "which file should I review?" || p.Data["state"] != "input-required" || p.Data["taskId"] != taskID || p.Data["contextId"] == "" {
				t.Fatalf("pending = %+v (metadata %v)", p, r.Metadata)
			}
			if stolen := mallory.call(ctx, task, &tool.Answer{ID: p.ID, OK: true, Data: "mallory.go"}); !stolen.IsError || !strings.Contains(stolen.Output, "no pending request has this id") {
				t.Fatalf("another owner answered: %+v", stolen)
			}
			if bad := alice.call(ctx, task, &tool.Answer{ID: p.ID, OK: true, Data: 42.0}); !bad.IsError || bad.Outcome == tool.OutcomePending || !strings.Contains(bad.Output, "list of parts") {
				t.Fatalf("an answer of the wrong shape: %+v", bad)
			}
			done := alice.call(ctx, task, &tool.Answer{ID: p.ID, OK: true, Data: []any{"main.go", map[string]any{"data": map[string]any{"line": 7.0}}}})
			if done.IsError || done.Output != `answer: main.go | {"line":7}` || done.Metadata["state"] != "completed" || done.Metadata["taskId"] != taskID {
				t.Fatalf("answered: %+v", done)
			}
			st := agent.stats(t)
			if len(st.Answers) != 1 || st.Answers[0].TaskID != taskID || st.Answers[0].ContextID != p.Data["contextId"] {
				t.Fatalf("the agent saw answers %+v; want one on task %s, context %v", st.Answers, taskID, p.Data["contextId"])
			}
			if strings.Contains(done.Output, "mallory") || store.Len() != 0 {
				t.Fatalf("mallory's answer reached the agent, or a request stayed open (%d)", store.Len())
			}
			// The id is spent.
			if again := alice.call(ctx, task, &tool.Answer{ID: p.ID, OK: true, Data: "again"}); !again.IsError || !strings.Contains(again.Output, "no pending request") {
				t.Fatalf("a spent id was answered again: %+v", again)
			}
		})
	}
}

// Declining (ok: false) cancels the task on the agent and fails the call
// saying so; a request nobody answers expires, the task is canceled on
// the agent, and the late answer is refused as expired.
func TestRealAgentInputDeclinedAndExpired(t *testing.T) {
	for _, tc := range []struct{ proto, cardName string }{{"1.0", "Node_Agent_1_0"}, {"0.3", "Node_Agent_0_3"}} {
		t.Run(tc.proto, func(t *testing.T) {
			t.Parallel()
			agent := startNodeAgent(t, tc.proto)
			cfg := a2a.AgentConfig{Card: agent.cardURL(), Timeout: 20000, PollEvery: 10}
			store := pending.NewLocal(pending.Limits{Timeout: time.Minute})
			s := startAgent(t, "node", cfg, sources.Env{Pending: store})
			alice := asker{reg: s, name: tc.cardName + "_echo", owner: tool.Owner{Principal: "alice"}}

			p := pendingInput(t, alice.call(context.Background(), "ask proceed?", nil))
			r := alice.call(context.Background(), "ask proceed?", &tool.Answer{ID: p.ID, OK: false, Reason: "no"})
			id, _ := p.Data["taskId"].(string)
			if !r.IsError || r.Resolved() != tool.OutcomeToolError || r.Metadata["state"] != "canceled" ||
				r.Output != "A2A task "+id+": the caller declined the agent's request for input; the task was canceled on the agent" {
				t.Fatalf("declined: %+v", r)
			}
			if st := agent.stats(t); !slices.Contains(st.Cancels, id) || len(st.Answers) != 0 {
				t.Fatalf("stats after a decline: %+v; want a cancel of %s and no answer", st, id)
			}

			short := pending.NewLocal(pending.Limits{Timeout: 200 * time.Millisecond})
			s2 := startAgent(t, "node-short", cfg, sources.Env{Pending: short})
			alice2 := asker{reg: s2, name: tc.cardName + "_echo", owner: tool.Owner{Principal: "alice"}}
			p = pendingInput(t, alice2.call(context.Background(), "ask proceed?", nil))
			id, _ = p.Data["taskId"].(string)
			// Poll the outcome: the expiry cancels the task on the agent.
			for !slices.Contains(agent.stats(t).Cancels, id) {
				if time.Now().After(p.ExpiresAt.Add(20 * time.Second)) {
					t.Fatalf("no cancel of %s 20s after the expiry: %+v", id, agent.stats(t))
				}
				time.Sleep(20 * time.Millisecond)
			}
			late := alice2.call(context.Background(), "ask proceed?", &tool.Answer{ID: p.ID, OK: true, Data: "yes"})
			if !late.IsError || !strings.Contains(late.Output, "expired") || short.Len() != 0 {
				t.Fatalf("late answer: %+v (open %d)", late, short.Len())
			}
		})
	}
}

// limits.maxPending counts an agent's requests with the MCP servers' in the
// shared store: past it the task is canceled at once and the call says why.
func TestInputRequestsBoundedPerPrincipal(t *testing.T) {
	t.Parallel()
	agent := newFakeAgent(t, "1.0")
	store := pending.NewLocal(pending.Limits{Timeout: time.Minute, MaxPerPrincipal: 1})
	s := startAgent(t, "fake", agentConfig(agent.cardURL()), sources.Env{Pending: store})
	alice := asker{reg: s, name: "Fake_Agent_echo", owner: tool.Owner{Principal: "alice"}}
	pendingInput(t, alice.call(context.Background(), "input after 1", nil))
	second := alice.call(context.Background(), "input after 1", nil)
	if !second.IsError || second.Outcome == tool.OutcomePending || !strings.Contains(second.Output, "too many pending requests") {
		t.Fatalf("second request past maxPending: %+v", second)
	}
	if _, _, cancels := agent.snapshot(); !slices.Equal(cancels, []string{"task-2"}) {
		t.Fatalf("cancels = %v, want the refused task-2 canceled", cancels)
	}
	// Another principal has its own allowance.
	bob := alice
	bob.owner = tool.Owner{Principal: "bob"}
	pendingInput(t, bob.call(context.Background(), "input after 1", nil))
}

// The answer must come with the same arguments as the call that asked;
// auth-required suspends the same way as input-required.
func TestInputAnswerBoundToArguments(t *testing.T) {
	forBoth(t, func(t *testing.T, proto string) {
		agent := newFakeAgent(t, proto)
		s := startAgent(t, "fake", agentConfig(agent.cardURL()), sources.Env{})
		alice := asker{reg: s, name: "Fake_Agent_echo", owner: tool.Owner{Principal: "alice"}}
		p := pendingInput(t, alice.call(context.Background(), "auth after 1", nil))
		if p.Prompt != "sign in first" || p.Data["state"] != "auth-required" || p.Data["taskId"] != "task-1" {
			t.Fatalf("pending = %+v", p)
		}
		r := alice.call(context.Background(), "auth after 2", &tool.Answer{ID: p.ID, OK: true, Data: "token"})
		if !r.IsError || r.Outcome == tool.OutcomePending || !strings.Contains(r.Output, "same tool name and arguments") {
			t.Fatalf("answer with other arguments: %+v", r)
		}
		if submits, _, _ := agent.snapshot(); submits != 1 {
			t.Fatalf("%d submits; the mismatching answer must not reach the agent", submits)
		}
	})
}

// Closing the source (a reload that changes the agent, shutdown) withdraws
// its open requests and cancels their tasks on the agent; a later answer is
// told the id is unknown.
func TestCloseWithdrawsWaitingTasks(t *testing.T) {
	forBoth(t, func(t *testing.T, proto string) {
		agent := newFakeAgent(t, proto)
		store := pending.NewLocal(pending.Limits{Timeout: time.Hour})
		s := startAgent(t, "fake", agentConfig(agent.cardURL()), sources.Env{Pending: store})
		alice := asker{reg: s, name: "Fake_Agent_echo", owner: tool.Owner{Principal: "alice"}}
		p := pendingInput(t, alice.call(context.Background(), "input after 1", nil))
		if err := s.src.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, _, cancels := agent.snapshot(); !slices.Equal(cancels, []string{"task-1"}) || store.Len() != 0 {
			t.Fatalf("after Close: cancels %v, open requests %d; want task-1 canceled and none open", cancels, store.Len())
		}
		if _, err := store.Peek(t.Context(), tool.Call{Name: "Fake_Agent_echo", Arguments: taskArgs("input after 1"), Owner: alice.owner}, p.ID); err == nil || !strings.Contains(err.Error(), "no pending request") {
			t.Fatalf("answer after Close: %v", err)
		}
	})
}
