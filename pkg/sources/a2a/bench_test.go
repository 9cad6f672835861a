package a2a_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/suspend/pending"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// BenchmarkExecuteTerminalOnSubmit is the whole client path of one call
// (argument decode, request build, HTTP round trip to an httptest agent,
// result decode) when the agent answers at once.
func BenchmarkExecuteTerminalOnSubmit(b *testing.B) {
	for _, proto := range protocols {
		b.Run("proto"+proto, func(b *testing.B) {
			agent := newFakeAgent(b, proto)
			s := startAgentB(b, agent.cardURL())
			args := taskArgs("instant")
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				res := testutil.Direct{Reg: s.reg}.Execute(context.Background(), "Fake_Agent_echo", tool.Call{Arguments: args})
				if res.IsError {
					b.Fatal(res.Output)
				}
			}
		})
	}
}

// BenchmarkExecuteWithPolls adds three polls at the fastest poll interval.
func BenchmarkExecuteWithPolls(b *testing.B) {
	agent := newFakeAgent(b, "1.0")
	s := startAgentB(b, agent.cardURL())
	args := taskArgs("complete after 3")
	b.ReportAllocs()
	for b.Loop() {
		res := testutil.Direct{Reg: s.reg}.Execute(context.Background(), "Fake_Agent_echo", tool.Call{Arguments: args})
		if res.IsError {
			b.Fatal(res.Output)
		}
	}
}

func startAgentB(b *testing.B, card string) started {
	cfg := agentConfig(card)
	cfg.PollEvery = 1
	s := startAgent(b, "fake", cfg, sources.Env{})
	if s.err != nil {
		b.Fatal(s.err)
	}
	return s
}

// BenchmarkInputPendingThousand holds 1,000 calls suspended on an agent's
// input-required task at once and reports what each costs this process:
// goroutines, and Go heap and stacks in use after a GC. The task waits on
// the agent, so nothing should wait here but the pending store's timer.
//
//	go test -run '^$' -bench 'BenchmarkInputPendingThousand' -benchtime 1x ./pkg/sources/a2a/
func BenchmarkInputPendingThousand(b *testing.B) {
	const n = 1000
	agent := newFakeAgent(b, "1.0")
	store := pending.NewLocal(pending.Limits{MaxPerPrincipal: 2 * n, Timeout: time.Hour})
	cfg := agentConfig(agent.cardURL())
	cfg.PollEvery = 1
	s := startAgent(b, "fake", cfg, sources.Env{Pending: store})
	owner := tool.Owner{Principal: "bench"}
	ctx := context.Background()
	for range b.N {
		runtime.GC()
		g0, mem0 := runtime.NumGoroutine(), inUseKiB()
		ids := make([]string, n)
		for i := range n {
			r := testutil.Direct{Reg: s.reg}.Execute(ctx, "Fake_Agent_echo", tool.Call{Arguments: taskArgs("input after 1"), Owner: owner})
			if r.Pending == nil {
				b.Fatalf("call %d did not suspend: %+v", i, r)
			}
			ids[i] = r.Pending.ID
		}
		runtime.GC()
		g1, mem1 := runtime.NumGoroutine(), inUseKiB()
		b.ReportMetric(float64(g1-g0)/n, "goroutines/pending")
		b.ReportMetric(float64(mem1-mem0)/n, "heap+stack-KiB/pending")
		for _, id := range ids {
			// Declining cancels each task on the agent and closes its request.
			r := testutil.Direct{Reg: s.reg}.Execute(ctx, "Fake_Agent_echo", tool.Call{Arguments: taskArgs("input after 1"), Owner: owner, Answer: &tool.Answer{ID: id}})
			if !strings.Contains(r.Output, "declined") {
				b.Fatalf("decline: %+v", r)
			}
		}
	}
}

// inUseKiB is the Go heap and goroutine stacks in use.
func inUseKiB() int {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int((m.HeapInuse + m.StackInuse) / 1024)
}
