package a2a_test

import (
	"context"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/a2a"
)

func TestHeadersExpandedNeverLeaked(t *testing.T) {
	const secret = "s3cr3t-t0ken-value"
	t.Setenv("A2A_TEST_TOKEN", secret)
	agent := newFakeAgent(t, "1.0")
	cfg := agentConfig(agent.cardURL())
	cfg.Headers = map[string]string{"Authorization": "Bearer ${A2A_TEST_TOKEN}", "X-Team": "blue"}
	s := startAgent(t, "fake", cfg, sources.Env{})
	if s.err != nil {
		t.Fatalf("Start: %v", s.err)
	}
	res := execute(context.Background(), s.reg, "Fake_Agent_echo", "complete after 1")
	if res.IsError {
		t.Fatalf("call: %+v", res)
	}
	for _, m := range []string{"card", "SendMessage", "GetTask"} {
		for _, r := range agent.requestsFor(m) {
			if got := r.Header.Get("Authorization"); got != "Bearer "+secret {
				t.Errorf("%s Authorization = %q, want the expanded header", m, got)
			}
			if got := r.Header.Get("X-Team"); got != "blue" {
				t.Errorf("%s X-Team = %q", m, got)
			}
		}
	}

	// An agent that echoes the credential in an error must not carry it
	// into the result or the log.
	res = execute(context.Background(), s.reg, "Fake_Agent_echo", "echoauth")
	if !res.IsError || res.Output != "rejected credentials: Bearer [redacted]" {
		t.Errorf("echoed secret result = %q, want it redacted", res.Output)
	}
	if strings.Contains(s.logs.String(), secret) {
		t.Errorf("the secret reached the log:\n%s", s.logs.String())
	}
	if s.logs.String() == "" {
		t.Error("nothing was logged; the log check proves nothing")
	}

	// The config as fingerprinted keeps the ${VAR} text.
	if cfg.Headers["Authorization"] != "Bearer ${A2A_TEST_TOKEN}" {
		t.Errorf("config header rewritten: %q", cfg.Headers["Authorization"])
	}
}

func TestMissingHeaderVariable(t *testing.T) {
	agent := newFakeAgent(t, "1.0")
	cfg := agentConfig(agent.cardURL())
	cfg.Headers = map[string]string{"Authorization": "Bearer ${A2A_TEST_UNSET_VAR}"}
	s := startAgent(t, "fake", cfg, sources.Env{})
	if s.err == nil || !strings.Contains(s.err.Error(), "A2A_TEST_UNSET_VAR") || !strings.Contains(s.err.Error(), "Authorization") {
		t.Fatalf("Start error = %v, want one naming the header and the variable", s.err)
	}
	if st := s.src.Status(); st.State != sources.Failed {
		t.Errorf("status = %+v, want failed", st)
	}
	if len(agent.requestsFor("card")) != 0 {
		t.Error("the card was fetched without its header")
	}
}

func newUnstarted(t *testing.T, card string) sources.Source {
	src := a2a.New("fresh", a2a.AgentConfig{Card: card}, sources.Env{})
	t.Cleanup(func() { _ = src.Close(context.Background()) })
	return src
}
