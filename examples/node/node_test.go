package nodeexample_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolnexus/toolnexus/internal/testutil/servertest"
	"github.com/toolnexus/toolnexus/pkg/server"
)

func TestMain(m *testing.M) {
	server.EnterSandboxHelper() // this test binary is also the sandbox helper of the servers it starts
	goleak.VerifyTestMain(m)
}

// tsx runs agent.ts straight from TypeScript; Node 20 has no type stripping.
const tsx = "node_modules/.bin/tsx"

// requireNode skips when node or the npm packages are missing, unless
// TOOLNEXUS_REQUIRE_E2E=1 (CI), where a missing peer is a failure.
func requireNode(t *testing.T) {
	t.Helper()
	var missing string
	if _, err := exec.LookPath("node"); err != nil {
		missing = "node is not on PATH"
	} else if _, err := os.Stat(tsx); err != nil {
		missing = "examples/node/node_modules is not installed"
	}
	if missing == "" {
		return
	}
	if os.Getenv("TOOLNEXUS_REQUIRE_E2E") == "1" {
		t.Fatalf("%s; TOOLNEXUS_REQUIRE_E2E=1 requires it (run make e2e-deps)", missing)
	}
	t.Skipf("%s; skipping the Node client test (run make e2e-deps, or set TOOLNEXUS_REQUIRE_E2E=1 to fail instead)", missing)
}

// serve starts a real server on loopback TCP and returns its address.
func serve(t *testing.T, cfgJSON string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "toolnexus.json")
	if err := os.WriteFile(cfg, []byte(cfgJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	srv, _ := servertest.Start(t, server.Options{
		ConfigPath:    cfg,
		Listen:        "127.0.0.1:0",
		MetricsListen: "-",
		Workspace:     filepath.Join(dir, "ws"),
		Logger:        slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	return srv.Addr().String()
}

// agent runs agent.ts with the given environment (nothing inherited that
// could point it elsewhere) and returns stdout, stderr and the exit code.
func agent(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	// A bound for a wedged child, not a timing assertion.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, tsx, append([]string{"agent.ts"}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TOOLNEXUS_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("running %s: %v", tsx, err)
	}
	return out.String(), errb.String(), code
}

// line returns the stdout line starting with prefix.
func line(t *testing.T, out, prefix string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	t.Fatalf("no line starting with %q in:\n%s", prefix, out)
	return ""
}

func TestNodeAgentListsExportsAndExecutes(t *testing.T) {
	requireNode(t)
	addr := serve(t, `{"debug": true, "builtins": false, "skills": []}`)

	out, errOut, code := agent(t, []string{"TOOLNEXUS_ADDR=" + addr})
	if code != 0 {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if got, want := line(t, out, "tools ("), "tools (4): debug_echo, debug_fail, debug_panic, debug_sleep"; got != want {
		t.Errorf("tool list line\n got %s\nwant %s", got, want)
	}
	if got, want := line(t, out, "openai tools:"), "openai tools: 4 function declarations"; got != want {
		t.Errorf("export line\n got %s\nwant %s", got, want)
	}
	if got, want := line(t, out, "first declaration:"), "first declaration: type=function function keys=name,description,parameters"; got != want {
		t.Errorf("OpenAI shape\n got %s\nwant %s", got, want)
	}
	// debug_echo returns the arguments as compact JSON: the model's text
	// made the round trip through TypeScript, gRPC and Go intact.
	if got, want := line(t, out, "result:"), `result: ok is_error=false output="{\"greeting\":\"hello from node\",\"n\":3}"`; got != want {
		t.Errorf("result line\n got %s\nwant %s", got, want)
	}
	if got, want := line(t, out, "tool message:"), `tool message: {"role":"tool","tool_call_id":"call_1","content":"{\"greeting\":\"hello from node\",\"n\":3}"}`; got != want {
		t.Errorf("tool message\n got %s\nwant %s", got, want)
	}
}

// The call streams: bash's output arrives as live events before the result.
func TestNodeAgentStreams(t *testing.T) {
	requireNode(t)
	addr := serve(t, `{"debug": false, "builtins": true, "skills": []}`)
	out, errOut, code := agent(t, nil, addr, "bash", `{"command":"echo live"}`)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if got, want := line(t, out, "live "), `live stdout: "live\n"`; got != want {
		t.Errorf("live line\n got %s\nwant %s", got, want)
	}
	if !strings.Contains(out, `live stdout: "live\n"`+"\n"+`result: ok`) {
		t.Errorf("the live line must come right before the result:\n%s", out)
	}
}

func TestNodeAgentToolFailureIsAResult(t *testing.T) {
	requireNode(t)
	addr := serve(t, `{"debug": true, "builtins": false, "skills": []}`)

	out, errOut, code := agent(t, nil, addr, "debug_fail", `{"message":"disk full"}`)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (is_error result)\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if got, want := line(t, out, "result:"), `result: tool_error is_error=true output="disk full"`; got != want {
		t.Errorf("result line\n got %s\nwant %s", got, want)
	}
}

func TestNodeAgentBearerToken(t *testing.T) {
	requireNode(t)
	const token = "node-agent-s3cret"
	addr := serve(t, `{"debug": true, "builtins": false, "skills": [],
		"auth": {"tokens": [{"name": "node", "token": "`+token+`", "tools": ["debug_echo"]}]}}`)

	_, errOut, code := agent(t, []string{"TOOLNEXUS_ADDR=" + addr})
	if code != 2 || !strings.Contains(errOut, "unauthenticated") {
		t.Fatalf("without a token: exit %d, stderr %q; want exit 2 and unauthenticated", code, errOut)
	}

	out, errOut, code := agent(t, []string{"TOOLNEXUS_ADDR=" + addr, "TOOLNEXUS_TOKEN=" + token})
	if code != 0 {
		t.Fatalf("with the token: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	// The token's allowlist shapes what the agent sees and exports.
	if got, want := line(t, out, "tools ("), "tools (1): debug_echo"; got != want {
		t.Errorf("tool list line\n got %s\nwant %s", got, want)
	}
	if got, want := line(t, out, "openai tools:"), "openai tools: 1 function declarations"; got != want {
		t.Errorf("export line\n got %s\nwant %s", got, want)
	}
	if strings.Contains(out+errOut, token) {
		t.Error("the token appears in the script's output")
	}
}

// TestNodeAgentAnswersElicitation: server-everything asks for input
// mid-call; the Node agent sees OUTCOME_PENDING, answers over gRPC, and the
// answer's text comes back in the result.
func TestNodeAgentAnswersElicitation(t *testing.T) {
	requireNode(t)
	entry := everythingEntry(t)
	addr := serve(t, `{"builtins": false, "skills": [], "mcpServers": {"everything": {"command": "node", "args": [`+strconv.Quote(entry)+`, "stdio"], "timeout": 60000}}}`)
	out, errOut, code := agent(t, []string{`TOOLNEXUS_ANSWER={"name": "Annie Easley"}`}, addr, "everything_trigger-elicitation-request", `{}`)
	if code != 0 || !strings.Contains(out, `pending: elicitation "Please provide inputs for the following fields:"`) || !strings.Contains(out, "- Name: Annie Easley") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// TestNodeAgentAnswersSampling: server-everything asks the agent's model for
// a completion mid-call; the Node agent answers with a CreateMessageResult
// over gRPC, and the completion's text comes back in the result.
func TestNodeAgentAnswersSampling(t *testing.T) {
	requireNode(t)
	entry := everythingEntry(t)
	addr := serve(t, `{"builtins": false, "skills": [], "mcpServers": {"everything": {"command": "node", "args": [`+strconv.Quote(entry)+`, "stdio"], "timeout": 60000}}}`)
	out, errOut, code := agent(t, []string{`TOOLNEXUS_ANSWER="forty-two, said the Node agent's model"`}, addr, "everything_trigger-sampling-request", `{"prompt": "what is 6*7?", "maxTokens": 50}`)
	if code != 0 || !strings.Contains(out, `pending: sampling "`) || !strings.Contains(line(t, out, "result:"), "forty-two, said the Node agent's model") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// everythingEntry is server-everything's entry point in e2e/node; the test
// skips without it (fails under TOOLNEXUS_REQUIRE_E2E=1).
func everythingEntry(t *testing.T) string {
	t.Helper()
	entry, err := filepath.Abs(filepath.Join("..", "..", "e2e", "node", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	if err == nil {
		_, err = os.Stat(entry)
	}
	if err != nil {
		if os.Getenv("TOOLNEXUS_REQUIRE_E2E") == "1" {
			t.Fatalf("server-everything is not installed (npm ci --prefix e2e/node): %v", err)
		}
		t.Skipf("server-everything is not installed (npm ci --prefix e2e/node): %v", err)
	}
	return entry
}
