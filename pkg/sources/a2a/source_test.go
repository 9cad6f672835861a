package a2a_test

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/a2a"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

var protocols = []string{"1.0", "0.3"}

func forBoth(t *testing.T, fn func(t *testing.T, proto string)) {
	for _, p := range protocols {
		t.Run("proto"+p, func(t *testing.T) {
			t.Parallel()
			fn(t, p)
		})
	}
}

func TestToolsFromCard(t *testing.T) {
	forBoth(t, func(t *testing.T, proto string) {
		agent := newFakeAgent(t, proto)
		s := startAgent(t, "fake", agentConfig(agent.cardURL()), sources.Env{})
		if s.err != nil {
			t.Fatalf("Start: %v", s.err)
		}
		if got, want := toolNames(s.reg), []string{"Fake_Agent_echo", "Fake_Agent_review_code"}; !slices.Equal(got, want) {
			t.Fatalf("tools = %v, want %v", got, want)
		}
		e, _ := s.reg.Snapshot().Lookup("Fake_Agent_review_code")
		if e.Tool.Description != "Reviews code." || e.Tool.Source != "a2a" {
			t.Errorf("tool = %q from %q, want the skill's description from source a2a", e.Tool.Description, e.Tool.Source)
		}
		if want := `{"type":"object","properties":{"task":{"type":"string"}},"required":["task"]}`; string(e.Tool.InputSchema) != want {
			t.Errorf("schema = %s, want %s", e.Tool.InputSchema, want)
		}
		if e.Layer.String() != "a2a/fake" || s.src.Layer() != e.Layer {
			t.Errorf("layer = %s, want a2a/fake", e.Layer)
		}
		if st := s.src.Status(); st.State != sources.Connected || st.Error != "" {
			t.Errorf("status = %+v, want connected", st)
		}
		if n := len(s.src.(*a2a.Source).Tools()); n != 2 {
			t.Errorf("Tools() has %d tools, want the 2 published", n)
		}
	})
}

var uuidRe = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestCompletedAfterSeveralPolls(t *testing.T) {
	forBoth(t, func(t *testing.T, proto string) {
		agent := newFakeAgent(t, proto)
		s := startAgent(t, "fake", agentConfig(agent.cardURL()), sources.Env{})
		res := execute(context.Background(), s.reg, "Fake_Agent_echo", "complete after 3")
		if res.IsError || res.Output != "alpha\nbeta\ngamma" {
			t.Fatalf("result = %+v, want the artifacts' text parts joined by newlines", res)
		}
		if res.Resolved() != tool.OutcomeOK {
			t.Errorf("outcome = %v, want ok", res.Resolved())
		}
		m := res.Metadata
		if m["agent"] != "fake" || m["taskId"] != "task-1" || m["state"] != "completed" || m["polls"] != 3 {
			t.Errorf("metadata = %v, want agent fake, taskId task-1, state completed, polls 3", m)
		}
		if ms, ok := m["ms"].(int64); !ok || ms < 0 {
			t.Errorf("metadata ms = %#v, want a non-negative int64", m["ms"])
		}
		submits, gets, cancels := agent.snapshot()
		if submits != 1 || gets["task-1"] != 3 || len(cancels) != 0 {
			t.Errorf("agent saw %d submits, %d polls, cancels %v; want 1, 3, none", submits, gets["task-1"], cancels)
		}
		checkWire(t, agent, proto, "complete after 3")
	})
}

// checkWire pins the exact request shapes of each protocol dialect.
func checkWire(t *testing.T, agent *fakeAgent, proto, text string) {
	t.Helper()
	send, get := "message/send", "tasks/get"
	if proto == "1.0" {
		send, get = "SendMessage", "GetTask"
	}
	subs := agent.requestsFor(send)
	if len(subs) != 1 {
		t.Fatalf("%d %s requests, want exactly 1", len(subs), send)
	}
	var p struct {
		Message struct {
			MessageID string `json:"messageId"`
		} `json:"message"`
	}
	if err := json.Unmarshal(subs[0].Params, &p); err != nil || !uuidRe.MatchString(p.Message.MessageID) {
		t.Fatalf("messageId %q is not a v4 UUID (%v)", p.Message.MessageID, err)
	}
	textJSON, _ := json.Marshal(text)
	want := `{"message":{"kind":"message","role":"user","messageId":"` + p.Message.MessageID + `","parts":[{"kind":"text","text":` + string(textJSON) + `}]},"configuration":{"blocking":false}}`
	if proto == "1.0" {
		want = `{"message":{"role":"ROLE_USER","messageId":"` + p.Message.MessageID + `","parts":[{"text":` + string(textJSON) + `}]},"configuration":{"returnImmediately":true}}`
	}
	if string(subs[0].Params) != want {
		t.Errorf("submit params =\n%s\nwant\n%s", subs[0].Params, want)
	}
	polls := agent.requestsFor(get)
	if len(polls) == 0 || string(polls[0].Params) != `{"id":"task-1"}` {
		t.Errorf("%s params = %v, want {\"id\":\"task-1\"}", get, polls)
	}
	for _, r := range append(subs, polls...) {
		v := r.Header.Values("A2A-Version")
		set := len(v) > 0
		if proto == "1.0" && (len(v) != 1 || v[0] != "1.0") {
			t.Errorf("%s header A2A-Version = %v, want exactly 1.0", r.Method, v)
		}
		if proto == "0.3" && set {
			t.Errorf("%s carries A2A-Version %v; a 0.3 request must not", r.Method, v)
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s Content-Type = %q", r.Method, ct)
		}
	}
}

func TestFailedWithMessage(t *testing.T) {
	forBoth(t, func(t *testing.T, proto string) {
		agent := newFakeAgent(t, proto)
		s := startAgent(t, "fake", agentConfig(agent.cardURL()), sources.Env{})
		res := execute(context.Background(), s.reg, "Fake_Agent_echo", "fail after 2: disk on fire")
		if !res.IsError || res.Output != "A2A task task-1 failed: disk on fire" || res.Resolved() != tool.OutcomeToolError {
			t.Fatalf("result = %+v, want failure `A2A task task-1 failed: disk on fire`", res)
		}
		if res.Metadata["state"] != "failed" || res.Metadata["polls"] != 2 {
			t.Errorf("metadata = %v, want state failed after 2 polls", res.Metadata)
		}
		if submits, _, cancels := agent.snapshot(); submits != 1 || len(cancels) != 0 {
			t.Errorf("submits %d cancels %v, want 1 and none", submits, cancels)
		}
	})
}

func TestStopStatesWithoutMessage(t *testing.T) {
	forBoth(t, func(t *testing.T, proto string) {
		agent := newFakeAgent(t, proto)
		s := startAgent(t, "fake", agentConfig(agent.cardURL()), sources.Env{})
		res := execute(context.Background(), s.reg, "Fake_Agent_echo", "cancelstate after 1")
		if !res.IsError || res.Output != "A2A task task-1 canceled" {
			t.Errorf("agent-side cancel = %+v, want failure `A2A task task-1 canceled`", res)
		}
		// input-required stops polling and suspends the call with what
		// the agent asked (input_test.go answers it).
		res = execute(context.Background(), s.reg, "Fake_Agent_echo", "input after 1")
		if res.Outcome != tool.OutcomePending || res.Output != "which file?" || res.Metadata["state"] != "input-required" {
			t.Errorf("input-required = %+v", res)
		}
		if _, gets, cancels := agent.snapshot(); gets["task-2"] != 1 || len(cancels) != 0 {
			t.Errorf("polls %d cancels %v, want 1 poll and no cancel", gets["task-2"], cancels)
		}
	})
}

func TestTimeoutSendsCancel(t *testing.T) {
	forBoth(t, func(t *testing.T, proto string) {
		agent := newFakeAgent(t, proto)
		agent.hold = true
		cfg := agentConfig(agent.cardURL())
		cfg.Timeout = 500
		s := startAgent(t, "fake", cfg, sources.Env{})
		res := execute(context.Background(), s.reg, "Fake_Agent_echo", "hang")
		if !res.IsError || res.Output != "A2A task task-1 timed out after 500ms (state=working)" {
			t.Fatalf("result = %+v, want `A2A task task-1 timed out after 500ms (state=working)`", res)
		}
		if res.Resolved() != tool.OutcomeTimeout {
			t.Errorf("outcome = %v, want timeout", res.Resolved())
		}
		submits, _, cancels := agent.snapshot()
		if submits != 1 || !slices.Equal(cancels, []string{"task-1"}) {
			t.Errorf("submits %d cancels %v, want 1 submit and a cancel of task-1", submits, cancels)
		}
		if res.Metadata["state"] != "working" || res.Metadata["taskId"] != "task-1" {
			t.Errorf("metadata = %v", res.Metadata)
		}
	})
}

func TestCallerCancelStopsPollingAndCancels(t *testing.T) {
	forBoth(t, func(t *testing.T, proto string) {
		agent := newFakeAgent(t, proto)
		s := startAgent(t, "fake", agentConfig(agent.cardURL()), sources.Env{})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		agent.setOnPoll(func(id string, n int) {
			if n == 2 {
				cancel()
			}
		})
		res := execute(ctx, s.reg, "Fake_Agent_echo", "hang")
		if !res.IsError || res.Output != "A2A task task-1 canceled" || res.Resolved() != tool.OutcomeCanceled {
			t.Fatalf("result = %+v, want `A2A task task-1 canceled`, outcome canceled", res)
		}
		submits, gets, cancels := agent.snapshot()
		if submits != 1 || gets["task-1"] != 2 || !slices.Equal(cancels, []string{"task-1"}) {
			t.Errorf("submits %d polls %d cancels %v; want 1, no poll after the cancel (2), cancel of task-1", submits, gets["task-1"], cancels)
		}
	})
}

func TestCallerDeadlineIsTimeout(t *testing.T) {
	t.Parallel()
	agent := newFakeAgent(t, "1.0")
	agent.hold = true
	s := startAgent(t, "fake", agentConfig(agent.cardURL()), sources.Env{})
	// The caller's deadline, shorter than the agent's timeout, ends the
	// call during a poll: a timeout, not a cancel, and the task is
	// canceled on the agent.
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	res := execute(ctx, s.reg, "Fake_Agent_echo", "hang")
	if !res.IsError || res.Resolved() != tool.OutcomeTimeout || !strings.HasPrefix(res.Output, "A2A task task-1 timed out after ") {
		t.Fatalf("result = %+v, want a timeout", res)
	}
	if _, _, cancels := agent.snapshot(); !slices.Equal(cancels, []string{"task-1"}) {
		t.Errorf("cancels = %v, want task-1", cancels)
	}
}

func TestTerminalOnSubmitNeedsNoPoll(t *testing.T) {
	forBoth(t, func(t *testing.T, proto string) {
		agent := newFakeAgent(t, proto)
		s := startAgent(t, "fake", agentConfig(agent.cardURL()), sources.Env{})
		res := execute(context.Background(), s.reg, "Fake_Agent_echo", "instant")
		if res.IsError || res.Output != "alpha\nbeta\ngamma" || res.Metadata["polls"] != 0 {
			t.Fatalf("result = %+v, want success with no poll", res)
		}
		res = execute(context.Background(), s.reg, "Fake_Agent_echo", "message")
		if res.IsError || res.Output != "direct answer" || res.Metadata["polls"] != 0 || res.Metadata["state"] != "completed" {
			t.Fatalf("direct message result = %+v", res)
		}
		if submits, gets, _ := agent.snapshot(); submits != 2 || len(gets) != 0 {
			t.Errorf("submits %d polls %v, want 2 submits and no poll", submits, gets)
		}
	})
}

func TestHistoryFallback(t *testing.T) {
	forBoth(t, func(t *testing.T, proto string) {
		agent := newFakeAgent(t, proto)
		s := startAgent(t, "fake", agentConfig(agent.cardURL()), sources.Env{})
		res := execute(context.Background(), s.reg, "Fake_Agent_echo", "history after 1")
		if res.IsError || res.Output != "from history" {
			t.Fatalf("result = %+v, want the last agent message of the history", res)
		}
	})
}

func TestJSONRPCErrors(t *testing.T) {
	forBoth(t, func(t *testing.T, proto string) {
		agent := newFakeAgent(t, proto)
		s := startAgent(t, "fake", agentConfig(agent.cardURL()), sources.Env{})
		res := execute(context.Background(), s.reg, "Fake_Agent_echo", "rpc error")
		if !res.IsError || res.Output != "agent exploded" || res.Metadata["agent"] != "fake" {
			t.Errorf("submit error = %+v, want failure `agent exploded`", res)
		}
		res = execute(context.Background(), s.reg, "Fake_Agent_echo", "poll error")
		if !res.IsError || res.Output != "task vanished" || res.Metadata["polls"] != 1 || res.Metadata["taskId"] != "task-2" {
			t.Errorf("poll error = %+v, want failure `task vanished` after 1 poll", res)
		}
		if submits, _, cancels := agent.snapshot(); submits != 2 || len(cancels) != 0 {
			t.Errorf("submits %d cancels %v", submits, cancels)
		}
	})
}

func TestTransportErrorsDuringPolling(t *testing.T) {
	t.Parallel()
	agent := newFakeAgent(t, "0.3")
	s := startAgent(t, "fake", agentConfig(agent.cardURL()), sources.Env{})
	res := execute(context.Background(), s.reg, "Fake_Agent_echo", "http500 after 1")
	// One good poll, then three failures in a row: the call gives up.
	if !res.IsError || res.Output != "A2A task task-1: tasks/get: HTTP 500 from the agent" || res.Metadata["polls"] != 4 {
		t.Fatalf("result = %+v", res)
	}
}

func TestOutputCap(t *testing.T) {
	t.Parallel()
	agent := newFakeAgent(t, "1.0")
	s := startAgent(t, "fake", agentConfig(agent.cardURL()), sources.Env{MaxOutputBytes: 11})
	res := execute(context.Background(), s.reg, "Fake_Agent_echo", "big")
	if res.IsError || res.Output != strings.Repeat("é", 5) || res.Metadata["truncated"] != true {
		t.Fatalf("result = %q %v, want 5 whole characters (10 bytes) and truncated", res.Output, res.Metadata)
	}
}

func TestInvalidArguments(t *testing.T) {
	t.Parallel()
	agent := newFakeAgent(t, "1.0")
	s := startAgent(t, "fake", agentConfig(agent.cardURL()), sources.Env{})
	for _, args := range []string{`{}`, `{"task":""}`, `{"task":3}`, `[1]`} {
		res := testutil.Direct{Reg: s.reg}.Execute(context.Background(), "Fake_Agent_echo", tool.Call{Arguments: json.RawMessage(args)})
		if !res.IsError || res.Resolved() != tool.OutcomeInvalidArguments || !strings.Contains(res.Output, `"task" must be a non-empty string`) {
			t.Errorf("%s: result = %+v, want invalid arguments", args, res)
		}
	}
	if submits, _, _ := agent.snapshot(); submits != 0 {
		t.Errorf("%d submits for invalid calls, want none", submits)
	}
}

func TestConcurrentCallsSubmitOnceEach(t *testing.T) {
	t.Parallel()
	agent := newFakeAgent(t, "1.0")
	s := startAgent(t, "fake", agentConfig(agent.cardURL()), sources.Env{})
	const n = 8
	var wg sync.WaitGroup
	results := make([]tool.Result, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = execute(context.Background(), s.reg, "Fake_Agent_echo", "complete after 2")
		}()
	}
	wg.Wait()
	ids := map[any]bool{}
	for _, r := range results {
		if r.IsError || r.Output != "alpha\nbeta\ngamma" {
			t.Errorf("result = %+v", r)
		}
		ids[r.Metadata["taskId"]] = true
	}
	if submits, _, _ := agent.snapshot(); submits != n || len(ids) != n {
		t.Errorf("submits %d, distinct tasks %d; want %d of each", submits, len(ids), n)
	}
}

func TestCloseCancelsCallsInFlight(t *testing.T) {
	t.Parallel()
	agent := newFakeAgent(t, "0.3")
	s := startAgent(t, "fake", agentConfig(agent.cardURL()), sources.Env{})
	closed := make(chan error, 1)
	agent.setOnPoll(func(id string, n int) {
		if n == 1 {
			go func() { closed <- s.src.Close(context.Background()) }()
		}
	})
	res := execute(context.Background(), s.reg, "Fake_Agent_echo", "hang")
	if !res.IsError || res.Output != "A2A task task-1 canceled" || res.Resolved() != tool.OutcomeCanceled {
		t.Fatalf("result = %+v, want the call canceled by Close", res)
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, _, cancels := agent.snapshot(); !slices.Equal(cancels, []string{"task-1"}) {
		t.Errorf("cancels = %v, want task-1 canceled on the agent", cancels)
	}
	res = execute(context.Background(), s.reg, "Fake_Agent_echo", "instant")
	if !res.IsError || !strings.Contains(res.Output, "shut down") {
		t.Errorf("call after Close = %+v, want a failure", res)
	}
}

func TestDisabledAgent(t *testing.T) {
	t.Parallel()
	s := startAgent(t, "off", a2a.AgentConfig{Card: "http://127.0.0.1:1/card", Disabled: true}, sources.Env{})
	if s.err != nil {
		t.Fatalf("Start: %v", s.err)
	}
	if st := s.src.Status(); st.State != sources.Disabled || s.src.Layer().String() != "a2a/off" {
		t.Errorf("status = %+v, want disabled a2a/off", st)
	}
	if n := s.reg.Snapshot().Len(); n != 0 {
		t.Errorf("%d tools from a disabled agent", n)
	}
}
