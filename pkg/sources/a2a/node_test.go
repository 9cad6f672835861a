package a2a_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/testutil"

	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/a2a"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// These tests run testdata/agent.mjs, a real agent built on the official
// JavaScript SDK (@a2a-js/sdk 1.x for protocol 1.0, its 0.3.x release under
// the npm alias a2a-sdk-03 for protocol 0.3), installed in e2e/node.

// nodeAgent is one running agent process.
type nodeAgent struct {
	base string
}

type nodeStats struct {
	Submits  int            `json:"submits"`
	Gets     map[string]int `json:"gets"`
	Cancels  []string       `json:"cancels"`
	Versions []string       `json:"versions"`
	// Answers are the messages that continued a task that asked for input.
	Answers []struct {
		TaskID    string `json:"taskId"`
		ContextID string `json:"contextId"`
	} `json:"answers"`
}

// startNodeAgent runs the agent and kills it when the test ends. Without
// node or the npm packages the test is skipped, unless
// TOOLNEXUS_REQUIRE_E2E=1 (CI), when it fails.
func startNodeAgent(t *testing.T, proto string, extra ...string) *nodeAgent {
	t.Helper()
	missing := func(what string) {
		t.Helper()
		if os.Getenv("TOOLNEXUS_REQUIRE_E2E") == "1" {
			t.Fatalf("%s; TOOLNEXUS_REQUIRE_E2E=1 requires it (run npm ci in e2e/node)", what)
		}
		t.Skipf("%s; skipping the real-agent test (run npm ci in e2e/node, or set TOOLNEXUS_REQUIRE_E2E=1 to fail instead)", what)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not on PATH")
	}
	nodeDir, err := filepath.Abs(filepath.Join("..", "..", "..", "e2e", "node"))
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range []string{"@a2a-js/sdk", "a2a-sdk-03", "express"} {
		if _, err := os.Stat(filepath.Join(nodeDir, "node_modules", pkg, "package.json")); err != nil {
			missing("e2e/node/node_modules/" + pkg + " is not installed")
		}
	}

	cmd := exec.Command(node, append([]string{filepath.Join("testdata", "agent.mjs"), nodeDir, proto}, extra...)...)
	return &nodeAgent{base: testutil.StartListening(t, cmd, 30*time.Second)}
}

func (a *nodeAgent) cardURL() string { return a.base + "/.well-known/agent-card.json" }

func (a *nodeAgent) stats(t *testing.T) nodeStats {
	t.Helper()
	resp, err := statsClient.Get(a.base + "/stats")
	if err != nil {
		t.Fatalf("stats: %v", err)
	}
	defer resp.Body.Close()
	var s nodeStats
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatalf("stats: %v", err)
	}
	return s
}

// statsClient keeps no idle connection, so no goroutine outlives a test.
var statsClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

func TestRealAgent(t *testing.T) {
	for _, tc := range []struct {
		proto, cardName, wantVersion string
	}{
		{"1.0", "Node_Agent_1_0", "1.0"},
		{"0.3", "Node_Agent_0_3", ""},
	} {
		t.Run("proto"+tc.proto, func(t *testing.T) {
			t.Parallel()
			agent := startNodeAgent(t, tc.proto)
			cfg := a2a.AgentConfig{Card: agent.cardURL(), Timeout: 20000, PollEvery: 10}
			s := startAgent(t, "node", cfg, sources.Env{})
			if s.err != nil {
				t.Fatalf("Start: %v", s.err)
			}
			echo := tc.cardName + "_echo"
			if got, want := toolNames(s.reg), []string{echo, tc.cardName + "_review_code"}; !slices.Equal(got, want) {
				t.Fatalf("tools = %v, want %v", got, want)
			}

			// call runs one task and checks that it cost exactly one submit.
			call := func(t *testing.T, ctx context.Context, name, task string) (tool.Result, nodeStats) {
				t.Helper()
				before := agent.stats(t).Submits
				res := execute(ctx, s.reg, name, task)
				after := agent.stats(t)
				if after.Submits-before != 1 {
					t.Errorf("%d submits for one call, want exactly 1", after.Submits-before)
				}
				if v := after.Versions[len(after.Versions)-1]; v != tc.wantVersion {
					t.Errorf("A2A-Version on submit = %q, want %q", v, tc.wantVersion)
				}
				return res, after
			}

			t.Run("completed after several polls", func(t *testing.T) {
				res, st := call(t, context.Background(), echo, "complete after 3")
				if res.IsError || res.Output != "alpha\nbeta\ngamma" || res.Metadata["state"] != "completed" {
					t.Fatalf("result = %+v", res)
				}
				id, _ := res.Metadata["taskId"].(string)
				polls, _ := res.Metadata["polls"].(int)
				// The agent finishes once it has seen 3 polls; the store may
				// show that one poll later.
				if polls < 3 || st.Gets[id] != polls {
					t.Errorf("polls = %d (agent counted %d), want at least 3 and equal", polls, st.Gets[id])
				}
			})

			t.Run("failed with a message", func(t *testing.T) {
				res, _ := call(t, context.Background(), echo, "fail after 2: disk on fire")
				id, _ := res.Metadata["taskId"].(string)
				if !res.IsError || id == "" || res.Output != "A2A task "+id+" failed: disk on fire" || res.Metadata["state"] != "failed" {
					t.Fatalf("result = %+v", res)
				}
			})

			t.Run("terminal on submit", func(t *testing.T) {
				res, _ := call(t, context.Background(), echo, "instant")
				if res.IsError || res.Output != "instant answer" || res.Metadata["polls"] != 0 {
					t.Fatalf("result = %+v, want the answer with no poll", res)
				}
			})

			t.Run("timeout cancels the task", func(t *testing.T) {
				short := startAgent(t, "node-short", a2a.AgentConfig{Card: agent.cardURL(), Timeout: 1000, PollEvery: 10}, sources.Env{})
				if short.err != nil {
					t.Fatal(short.err)
				}
				before := agent.stats(t).Submits
				res := execute(context.Background(), short.reg, echo, "hang")
				st := agent.stats(t)
				id, _ := res.Metadata["taskId"].(string)
				if !res.IsError || res.Resolved() != tool.OutcomeTimeout || id == "" ||
					res.Output != "A2A task "+id+" timed out after 1000ms (state=working)" {
					t.Fatalf("result = %+v", res)
				}
				if st.Submits-before != 1 || !slices.Contains(st.Cancels, id) {
					t.Errorf("submits %d, cancels %v; want 1 and a cancel of %s", st.Submits-before, st.Cancels, id)
				}
				if strings.Contains(short.logs.String(), "cancel failed") {
					t.Errorf("the agent refused the cancel:\n%s", short.logs.String())
				}
			})

			t.Run("caller cancel stops polling and cancels", func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				// The agent calls this when the first poll arrives.
				notify := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { cancel() }))
				defer notify.Close()
				res, st := call(t, ctx, echo, "hang notify="+notify.URL)
				id, _ := res.Metadata["taskId"].(string)
				if !res.IsError || res.Resolved() != tool.OutcomeCanceled || id == "" || res.Output != "A2A task "+id+" canceled" {
					t.Fatalf("result = %+v", res)
				}
				if st.Gets[id] != 1 || !slices.Contains(st.Cancels, id) {
					t.Errorf("polls %d, cancels %v; want no poll after the cancel (1) and a cancel of %s", st.Gets[id], st.Cancels, id)
				}
				if strings.Contains(s.logs.String(), "cancel failed") {
					t.Errorf("the agent refused the cancel:\n%s", s.logs.String())
				}
			})
		})
	}
}

// A 1.x agent with the 0.3 compat layer lists both versions (0.3 first);
// the client must speak 1.0 to it.
func TestRealCompatAgentPrefers10(t *testing.T) {
	t.Parallel()
	agent := startNodeAgent(t, "compat")
	s := startAgent(t, "compat", a2a.AgentConfig{Card: agent.cardURL(), Timeout: 20000, PollEvery: 10}, sources.Env{})
	if s.err != nil {
		t.Fatalf("Start: %v", s.err)
	}
	res := execute(context.Background(), s.reg, "Node_Compat_Agent_echo", "complete after 1")
	if res.IsError || res.Output != "alpha\nbeta\ngamma" {
		t.Fatalf("result = %+v", res)
	}
	if st := agent.stats(t); st.Submits != 1 || !slices.Equal(st.Versions, []string{"1.0"}) {
		t.Errorf("submits %d versions %v, want one 1.0 submit", st.Submits, st.Versions)
	}
}
