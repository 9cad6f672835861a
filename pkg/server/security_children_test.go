package server_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/childenv"
)

// TestChildrenSeeNoServerSecret is the attack of an agent token that may
// run bash: it prints its environment, hoping for the admin token the
// server was started with. A stdio MCP server (this test binary again)
// tries the same. Both see the few harmless variables every child gets
// plus what the config gave them; the admin token is in neither, and the
// agent's own token came from a file, never from the environment.
func TestChildrenSeeNoServerSecret(t *testing.T) {
	if os.Getenv("TN_SECURITY_MCP_CHILD") == "environ" {
		os.Exit(serveEnvironMCP())
	}
	const adminTok = "admin-token-from-env-6c1d"
	const agentTok = "agent-token-from-file-9e2b"
	const apiKey = "api-key-for-bash-3f70"
	t.Setenv("TN_SEC_ADMIN_TOKEN", adminTok)
	t.Setenv("TN_SEC_PASS", "passed-through")
	dir := t.TempDir()
	agentFile := filepath.Join(dir, "agent-token")
	keyFile := filepath.Join(dir, "api-key")
	if err := os.WriteFile(agentFile, []byte(agentTok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, []byte(apiKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`{"skills": [],
		"builtins": {"bash": {"env": ["TN_SEC_PASS", "API_KEY=${file:%s}"]}},
		"mcpServers": {"envsrv": {"command": [%q, "-test.run=^TestChildrenSeeNoServerSecret$"],
			"env": {"TN_SECURITY_MCP_CHILD": "environ", "GIVEN": "${TN_SEC_PASS}"}}},
		"auth": {"tokens": [
			{"name": "admin", "token": "${TN_SEC_ADMIN_TOKEN}", "admin": true},
			{"name": "agent", "token": "${file:%s}", "tools": ["bash", "envsrv_*"]}]}}`, keyFile, os.Args[0], agentFile)
	s := serve(t, cfg, nil)
	reg := pb.NewRegistryServiceClient(s.dial(t))
	run := func(name, args string) string {
		t.Helper()
		resp, err := reg.Execute(bearer(agentTok), &pb.ExecuteRequest{Name: name, Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: args}})
		if err != nil || resp.GetResult().GetIsError() {
			t.Fatalf("%s as the agent: %v %v", name, resp, err)
		}
		return resp.GetResult().GetOutput()
	}

	// The shell adds PWD, SHLVL and _ itself; the sandbox adds TMPDIR, the
	// call's private temp dir.
	bashEnv := run("bash", `{"command": "env"}`)
	checkChildEnv(t, "bash", bashEnv, []string{"TN_SEC_PASS", "API_KEY", "PWD", "SHLVL", "_", "OLDPWD", "TMPDIR"}, adminTok, agentTok)
	for _, want := range []string{"TN_SEC_PASS=passed-through\n", "API_KEY=" + apiKey + "\n"} {
		if !strings.Contains(bashEnv, want) {
			t.Errorf("bash's environment lacks %q (builtins.bash.env):\n%s", want, bashEnv)
		}
	}

	mcpEnv := run("envsrv_environ", `{}`)
	checkChildEnv(t, "the stdio MCP server", mcpEnv, []string{"TN_SECURITY_MCP_CHILD", "GIVEN"}, adminTok, agentTok)
	if !strings.Contains(mcpEnv, "GIVEN=passed-through\n") {
		t.Errorf("the MCP server's environment lacks its env entry GIVEN:\n%s", mcpEnv)
	}
}

// checkChildEnv fails when env (NAME=value lines) has a variable that is
// neither one every child gets nor one of extra, or holds a secret.
func checkChildEnv(t *testing.T, who, env string, extra []string, secrets ...string) {
	t.Helper()
	for _, sec := range secrets {
		if strings.Contains(env, sec) {
			t.Errorf("%s sees the server's secret %q:\n%s", who, sec, env)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(env), "\n") {
		name, _, _ := strings.Cut(line, "=")
		if !slices.Contains(childenv.Base, name) && !slices.Contains(extra, name) {
			t.Errorf("%s sees %s, which the server did not give it", who, name)
		}
	}
}

// serveEnvironMCP is the child side: an MCP server whose "environ" tool
// answers with its own environment.
func serveEnvironMCP() int {
	s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "environ", Version: "1.0.0"}, nil)
	mcpsdk.AddTool(s, &mcpsdk.Tool{Name: "environ"}, func(context.Context, *mcpsdk.CallToolRequest, struct{}) (*mcpsdk.CallToolResult, any, error) {
		return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: strings.Join(os.Environ(), "\n") + "\n"}}}, nil, nil
	})
	if err := s.Run(context.Background(), &mcpsdk.StdioTransport{}); err != nil {
		return 1
	}
	return 0
}
