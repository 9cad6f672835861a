package a2a_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/a2a"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// A real @a2a-js/sdk agent whose card says it streams: a streaming call
// uses message/stream (SendStreamingMessage in 1.0), each status update
// becomes a progress event, no task is polled, and cancelling the call
// sends tasks/cancel.
func TestRealStreamingAgent(t *testing.T) {
	for _, tc := range []struct{ proto, cardName string }{
		{"0.3", "Node_Agent_0_3"},
		{"1.0", "Node_Agent_1_0"},
	} {
		t.Run("proto"+tc.proto, func(t *testing.T) {
			t.Parallel()
			agent := startNodeAgent(t, tc.proto, "stream")
			s := startAgent(t, "node", a2a.AgentConfig{Card: agent.cardURL(), Timeout: 20000, PollEvery: 10}, sources.Env{})
			if s.err != nil {
				t.Fatalf("Start: %v", s.err)
			}
			echo := tc.cardName + "_echo"

			var mu sync.Mutex
			var progress []string
			ctx := tool.WithEvents(context.Background(), func(e tool.Event) {
				mu.Lock()
				defer mu.Unlock()
				if e.Kind == tool.EventProgress {
					progress = append(progress, e.Message)
				}
			})
			res := execute(ctx, s.reg, echo, "stream 3")
			if res.IsError || res.Output != "alpha\nbeta\ngamma" || res.Metadata["state"] != "completed" {
				t.Fatalf("result = %+v", res)
			}
			mu.Lock()
			got := slices.Clone(progress)
			mu.Unlock()
			if want := []string{"step 1", "step 2", "step 3", "done"}; !slices.Equal(got, want) {
				t.Fatalf("progress = %q, want %q", got, want)
			}
			id, _ := res.Metadata["taskId"].(string)
			if st := agent.stats(t); st.Gets[id] != 0 {
				t.Fatalf("a streamed task was polled %d times", st.Gets[id])
			}

			// Without a sink the same agent is polled as before.
			if res := execute(context.Background(), s.reg, echo, "complete after 1"); res.IsError || res.Output != "alpha\nbeta\ngamma" {
				t.Fatalf("unstreamed result = %+v", res)
			}

			// Cancel once the first update arrived: the agent gets the cancel.
			cctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			started := make(chan struct{})
			var once sync.Once
			cctx = tool.WithEvents(cctx, func(e tool.Event) {
				if e.Kind == tool.EventProgress && e.Message == "started" {
					once.Do(func() { close(started) })
				}
			})
			done := make(chan tool.Result, 1)
			go func() { done <- execute(cctx, s.reg, echo, "stream hang") }()
			<-started
			cancel()
			res = <-done
			if res.Outcome != tool.OutcomeCanceled {
				t.Fatalf("canceled call = %+v", res)
			}
			id, _ = res.Metadata["taskId"].(string)
			if id == "" || !slices.Contains(agent.stats(t).Cancels, id) {
				t.Fatalf("the agent saw no cancel of task %q: %+v", id, agent.stats(t))
			}
		})
	}
}
