package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/toolnexus/toolnexus/internal/testutil/servertest"
	"github.com/toolnexus/toolnexus/pkg/server"
)

func TestMain(m *testing.M) {
	server.EnterSandboxHelper() // this test binary is also the sandbox helper of the servers it starts
	goleak.VerifyTestMain(m)
}

// serve starts a real server with the debug tools on loopback and returns
// its address and a stop function. It takes no *testing.T so the Example
// can use it too.
func serve(cfgJSON string) (addr string, stop func(), err error) {
	dir, err := os.MkdirTemp("", "agent-example")
	if err != nil {
		return "", nil, err
	}
	cfg := filepath.Join(dir, "toolnexus.json")
	if err := os.WriteFile(cfg, []byte(cfgJSON), 0o600); err != nil {
		return "", nil, err
	}
	srv, stopServe, err := servertest.Run(server.Options{ConfigPath: cfg, Listen: "127.0.0.1:0", MetricsListen: "-",
		Workspace: filepath.Join(dir, "ws"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return "", nil, err
	}
	return srv.Addr().String(), func() {
		_ = stopServe()
		os.RemoveAll(dir)
	}, nil
}

const debugOnly = `{"debug": true, "builtins": false, "skills": []}`

func startServer(t *testing.T, cfgJSON string) string {
	t.Helper()
	addr, stop, err := serve(cfgJSON)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return addr
}

func runArgs(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), code
}

func TestAgentReplaysToolCall(t *testing.T) {
	addr := startServer(t, debugOnly)
	out, errOut, code := runArgs(t, "-addr", addr)
	if code != 0 {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
	want := `tools offered to the model: 4
user: Please run the tool for me.
assistant calls debug_echo {"greeting":"hello from go"}
tool call_1 -> ok: {"greeting":"hello from go"}
assistant: debug_echo said: {"greeting":"hello from go"}
`
	if out != want {
		t.Errorf("transcript:\n%s\nwant:\n%s", out, want)
	}
}

func TestAgentToolFailureGoesBackToTheModel(t *testing.T) {
	addr := startServer(t, debugOnly)
	out, errOut, code := runArgs(t, "-addr", "dns:///"+addr, "-tool", "debug_fail", "-args", `{"message":"disk full"}`)
	if code != 0 {
		t.Fatalf("exit %d, stderr %s; a failed tool is an answer, not an agent error", code, errOut)
	}
	for _, want := range []string{"tool call_1 -> tool_error: disk full\n", "assistant: debug_fail said: disk full\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("transcript lacks %q:\n%s", want, out)
		}
	}
}

func TestAgentUnofferedTool(t *testing.T) {
	addr := startServer(t, debugOnly)
	_, errOut, code := runArgs(t, "-addr", addr, "-tool", "bash", "-args", `{"command":"ls"}`)
	if code != 1 || !strings.Contains(errOut, `the server offers no tool named "bash"`) {
		t.Errorf("exit %d, stderr %q; want 1 and the unoffered tool named", code, errOut)
	}
}

func TestAgentBadArguments(t *testing.T) {
	_, errOut, code := runArgs(t, "-args", "{not json")
	if code != 2 || !strings.Contains(errOut, "-args") {
		t.Errorf("exit %d, stderr %q; want 2 naming -args", code, errOut)
	}
}

func TestAgentBearerToken(t *testing.T) {
	addr := startServer(t, `{"debug": true, "builtins": false, "skills": [],
		"auth": {"tokens": [{"name": "agent", "token": "go-agent-s3cret"}]}}`)
	_, errOut, code := runArgs(t, "-addr", addr)
	if code != 1 || !strings.Contains(errOut, "Unauthenticated") {
		t.Errorf("without a token: exit %d, stderr %q; want 1 and Unauthenticated", code, errOut)
	}
	t.Setenv("TOOLNEXUS_TOKEN", "go-agent-s3cret")
	out, errOut, code := runArgs(t, "-addr", addr)
	if code != 0 || !strings.Contains(out, "tool call_1 -> ok:") {
		t.Errorf("with the token: exit %d, stderr %q, stdout %q", code, errOut, out)
	}
	if strings.Contains(out+errOut, "go-agent-s3cret") {
		t.Error("the token appears in the output")
	}
}

// The loop against a live server; the model is scripted, the server and
// the tool call are real.
func Example() {
	addr, stop, err := serve(debugOnly)
	if err != nil {
		panic(err)
	}
	defer stop()
	code := run(context.Background(), []string{"-addr", addr, "-tool", "debug_echo", "-args", `{"city":"Oslo","days":3}`,
		"-prompt", "Echo the forecast request."}, os.Stdout, os.Stderr)
	if code != 0 {
		fmt.Println("exit", code)
	}
	// Output:
	// tools offered to the model: 4
	// user: Echo the forecast request.
	// assistant calls debug_echo {"city":"Oslo","days":3}
	// tool call_1 -> ok: {"city":"Oslo","days":3}
	// assistant: debug_echo said: {"city":"Oslo","days":3}
}
