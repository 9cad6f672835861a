package a2a_test

import (
	"context"
	"testing"

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
