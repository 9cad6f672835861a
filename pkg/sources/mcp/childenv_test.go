package mcp_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/mcp"
)

// A stdio MCP server is a third-party program: it gets PATH, HOME and the
// locale from toolnexus, and what its own "env" gives it, never the rest of
// toolnexus's environment (where the auth tokens and API keys live).
func TestStdioServerSeesNoServerSecret(t *testing.T) {
	const secret = "server-only-secret-91ab"
	t.Setenv("TN_MCP_SERVER_SECRET", secret)
	t.Setenv("TN_MCP_GIVEN", "given-value")
	file := filepath.Join(t.TempDir(), "api-key")
	if err := os.WriteFile(file, []byte("file-value-77\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := localConfig()
	cfg.Environment = map[string]string{"FROM_ENV": "${TN_MCP_GIVEN}", "FROM_FILE": "${file:" + file + "}", "PLAIN": "p"}
	reg, _ := start(t, "envsrv", cfg)
	for name, want := range map[string]string{
		"TN_MCP_SERVER_SECRET": "", "TN_MCP_GIVEN": "",
		"FROM_ENV": "given-value", "FROM_FILE": "file-value-77", "PLAIN": "p",
		"PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME"),
	} {
		res := call(t, reg, "envsrv_where", `{"name": "`+name+`"}`)
		_, got, _ := strings.Cut(res.Output, "\n")
		if res.IsError || got != want {
			t.Errorf("the server sees %s=%q, want %q (%+v)", name, got, want, res)
		}
	}
}

// A server that prints the secret its config gave it on stderr and dies:
// the status that ListSources shows carries [redacted], not the secret.
func TestStdioServerStderrIsRedacted(t *testing.T) {
	const secret = "api-key-from-file-5e6f"
	file := filepath.Join(t.TempDir(), "api-key")
	if err := os.WriteFile(file, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := localConfig("-leak-env", "API_KEY")
	cfg.Environment = map[string]string{"API_KEY": "${file:" + file + "}"}
	src := mcp.New("leaky", cfg, testEnv)
	t.Cleanup(func() { _ = src.Close(context.Background()) })
	err := src.Start(t.Context(), registry.New())
	st := src.Status()
	if err == nil || st.State != sources.Failed {
		t.Fatalf("Start = %v, status %+v; want failed", err, st)
	}
	mustContain(t, st.Error, "stderr: fatal: bad key API_KEY=[redacted]")
	if strings.Contains(st.Error, secret) || strings.Contains(err.Error(), secret) {
		t.Fatalf("the secret reached the status: %q", st.Error)
	}
}

// A missing secret file fails that server alone, naming the key and the file.
func TestStdioServerMissingSecretFile(t *testing.T) {
	cfg := localConfig()
	cfg.Environment = map[string]string{"API_KEY": "${file:/nonexistent/tn-secret}"}
	src := mcp.New("nofile", cfg, testEnv)
	t.Cleanup(func() { _ = src.Close(context.Background()) })
	err := src.Start(t.Context(), registry.New())
	if err == nil {
		t.Fatal("Start succeeded without the secret file")
	}
	mustContain(t, src.Status().Error, `MCP server "nofile": env API_KEY: cannot read the secret file /nonexistent/tn-secret (referenced as ${file:/nonexistent/tn-secret}): no such file or directory`)
}
