// Package pythonexample_test runs the Python agent (examples/python) against
// a real server and checks its generated stubs are fresh.
package pythonexample_test

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

	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/servertest"
	"github.com/toolnexus/toolnexus/pkg/server"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

func TestMain(m *testing.M) {
	server.EnterSandboxHelper() // this test binary is also the sandbox helper of the servers it starts
	goleak.VerifyTestMain(m)
}

// missing skips, or fails under TOOLNEXUS_REQUIRE_E2E=1.
func missing(t *testing.T, what string) {
	t.Helper()
	if os.Getenv("TOOLNEXUS_REQUIRE_E2E") == "1" {
		t.Fatalf("%s; TOOLNEXUS_REQUIRE_E2E=1 requires it (apt-get install python3-grpcio python3-protobuf protobuf-compiler protobuf-compiler-grpc)", what)
	}
	t.Skipf("%s; skipping (apt-get install python3-grpcio python3-protobuf protobuf-compiler protobuf-compiler-grpc, or set TOOLNEXUS_REQUIRE_E2E=1 to fail instead)", what)
}

// python finds an interpreter that has grpcio and protobuf: the first
// python3 on PATH, else Debian's /usr/bin/python3 (a pyenv or venv python3
// earlier on PATH usually lacks the Debian packages).
func python(t *testing.T) string {
	t.Helper()
	var candidates []string
	if p, err := exec.LookPath("python3"); err == nil {
		candidates = append(candidates, p)
	}
	candidates = append(candidates, "/usr/bin/python3")
	for _, p := range candidates {
		if exec.Command(p, "-c", "import grpc, google.protobuf").Run() == nil {
			return p
		}
	}
	missing(t, "no python3 with the grpc and google.protobuf modules")
	return ""
}

var reporter = tool.Must(tool.New("reporter", func(ctx context.Context, _ tool.Call) tool.Result {
	tool.Progress(ctx, 1, 2, "half")
	tool.Progress(ctx, 2, 2, "all")
	tool.Log(ctx, tool.LevelInfo, "rep", map[string]any{"n": 1})
	return tool.Rich(tool.Text("done"), tool.Image("image/png", []byte{0x89, 'P', 'N', 'G'}))
}))

func serve(t *testing.T, cfgJSON string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "toolnexus.json")
	if err := os.WriteFile(cfg, []byte(cfgJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	srv, _ := servertest.Start(t, server.Options{ConfigPath: cfg, Listen: "127.0.0.1:0", MetricsListen: "-",
		Workspace: filepath.Join(dir, "ws"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Native: []tool.Tool{reporter}})
	return srv.Addr().String()
}

func agent(t *testing.T, py string, args ...string) (string, string, int) {
	t.Helper()
	return agentWith(t, py, nil, args...)
}

// agentWith runs agent.py with extra TOOLNEXUS_* variables.
func agentWith(t *testing.T, py string, env []string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, append([]string{"agent.py"}, args...)...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TOOLNEXUS_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "PYTHONDONTWRITEBYTECODE=1") // no __pycache__ in the source tree
	cmd.Env = append(cmd.Env, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	code := 0
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatalf("running agent.py: %v", err)
	}
	return out.String(), errb.String(), code
}

func TestPythonAgentListsExportsAndStreams(t *testing.T) {
	py := python(t)
	addr := serve(t, `{"debug": true, "builtins": true, "skills": []}`)

	out, errOut, code := agent(t, py, addr)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"openai tools: ",
		"first declaration: type=function function keys=name,description,parameters",
		`model called: debug_echo {"greeting":"hello from python","n":3}`,
		`result: ok is_error=false output="{\"greeting\":\"hello from python\",\"n\":3}"`,
		`tool message: {"role": "tool", "tool_call_id": "call_1", "content": "{\"greeting\":\"hello from python\",\"n\":3}"}`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "debug_echo") || !strings.Contains(out, "bash") || !strings.Contains(out, "reporter") {
		t.Errorf("tool list:\n%s", out)
	}

	// bash streams its output; the result follows.
	out, errOut, code = agent(t, py, addr, "bash", `{"command": "echo live"}`)
	if code != 0 || !strings.Contains(out, `live stdout: 'live\n'`) || !strings.Contains(out, `result: ok is_error=false output="live\n"`) {
		t.Fatalf("bash: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	// progress, a log message and a rich result.
	out, errOut, code = agent(t, py, addr, "reporter", `{}`)
	if code != 0 || !strings.Contains(out, "progress: 1/2 half\nprogress: 2/2 all\nlog [info] rep: {\"n\": 1.0}") ||
		!strings.Contains(out, "part: image image/png 4 bytes") {
		t.Fatalf("reporter: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	// A failing tool exits 1; an unreachable server exits 2.
	if _, _, code := agent(t, py, addr, "debug_fail", `{}`); code != 1 {
		t.Fatalf("debug_fail exit %d, want 1", code)
	}
	if _, errOut, code := agent(t, py, "127.0.0.1:1"); code != 2 || !strings.Contains(errOut, "unavailable") {
		t.Fatalf("no server: exit %d, stderr %s", code, errOut)
	}
}

// TestPythonAgentAnswersElicitation: server-everything asks for input
// mid-call; the Python agent sees OUTCOME_PENDING, answers over gRPC, and
// the answer's text comes back in the result.
func TestPythonAgentAnswersElicitation(t *testing.T) {
	py := python(t)
	addr := serve(t, everythingConfig(t))
	out, errOut, code := agentWith(t, py, []string{`TOOLNEXUS_ANSWER={"name": "Mary Jackson"}`}, addr, "everything_trigger-elicitation-request", `{}`)
	if code != 0 || !strings.Contains(out, `pending: elicitation "Please provide inputs for the following fields:"`) || !strings.Contains(out, "- Name: Mary Jackson") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// TestPythonAgentAnswersSampling: server-everything asks the agent's model
// for a completion mid-call; the Python agent answers with a
// CreateMessageResult over gRPC, and the completion's text comes back in
// the result.
func TestPythonAgentAnswersSampling(t *testing.T) {
	py := python(t)
	addr := serve(t, everythingConfig(t))
	out, errOut, code := agentWith(t, py, []string{`TOOLNEXUS_ANSWER="forty-two, said the Python agent's model"`}, addr, "everything_trigger-sampling-request", `{"prompt": "what is 6*7?", "maxTokens": 50}`)
	if code != 0 || !strings.Contains(out, `pending: sampling "`) || !strings.Contains(out, "result: ok is_error=false") || !strings.Contains(out, "forty-two, said the Python agent's model") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// everythingConfig serves server-everything from e2e/node; the test skips
// without it (fails under TOOLNEXUS_REQUIRE_E2E=1).
func everythingConfig(t *testing.T) string {
	t.Helper()
	entry, err := filepath.Abs(filepath.Join("..", "..", "e2e", "node", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	if err == nil {
		_, err = os.Stat(entry)
	}
	if _, nodeErr := exec.LookPath("node"); err != nil || nodeErr != nil {
		missing(t, "server-everything is not installed (npm ci --prefix e2e/node)")
	}
	return `{"builtins": false, "skills": [], "mcpServers": {"everything": {"command": "node", "args": [` + strconv.Quote(entry) + `, "stdio"], "timeout": 60000}}}`
}

// TestGeneratedCodeIsFresh regenerates the Python stubs from proto/ into a
// temporary directory and compares them with the committed gen/. Fix a
// failure with:
//
//	go tool -modfile=tools/go.mod buf generate --template buf.gen.python.yaml
func TestGeneratedCodeIsFresh(t *testing.T) {
	for _, bin := range []string{"protoc", "grpc_python_plugin"} {
		if _, err := exec.LookPath(bin); err != nil {
			missing(t, bin+" is not on PATH")
		}
	}
	if testing.Short() {
		t.Skip("-short: skipping the buf run")
	}
	testutil.CheckGenerated(t, "buf.gen.python.yaml", "examples/python/gen", func(rel string) bool {
		return strings.Contains(rel, "__pycache__")
	})
}
