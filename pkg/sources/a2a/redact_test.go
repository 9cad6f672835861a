package a2a_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/sources"
)

// An agent that puts the configured credential into its answer does not
// hand it to the model: the result carries [redacted]. The secret comes
// from a file here, as ${file:/path} allows.
func TestEchoedSecretIsRedactedFromResults(t *testing.T) {
	const secret = "a2a-file-secret-81c3"
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	agent := newFakeAgent(t, "1.0")
	cfg := agentConfig(agent.cardURL())
	cfg.Headers = map[string]string{"Authorization": "Bearer ${file:" + file + "}"}
	s := startAgent(t, "fake", cfg, sources.Env{})
	if s.err != nil {
		t.Fatalf("Start: %v", s.err)
	}
	res := execute(context.Background(), s.reg, "Fake_Agent_echo", "echoresult")
	if res.IsError || res.Output != "your credentials: Bearer [redacted]" {
		t.Fatalf("result = %+v, want the echoed credential redacted", res)
	}
	if got := agent.requestsFor("SendMessage")[0].Header.Get("Authorization"); got != "Bearer "+secret {
		t.Fatalf("the agent got Authorization %q, want the file's secret", got)
	}
	if strings.Contains(s.logs.String(), secret) {
		t.Fatal("the secret reached the log")
	}
}
