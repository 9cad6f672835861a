package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/toolnexus/toolnexus/internal/testutil/servertest"
	"github.com/toolnexus/toolnexus/pkg/server"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

func TestMain(m *testing.M) {
	server.EnterSandboxHelper() // this test binary is also the sandbox helper of the servers it starts
	// The process tests re-run this binary as the CLI itself, so main's
	// signal handling and exit codes are tested for real.
	if os.Getenv(runMainEnv) == "1" {
		main()
		return
	}
	// The CLI reads these; a developer's own settings must not leak in.
	os.Unsetenv("TOOLNEXUS_ADDR")
	os.Unsetenv("TOOLNEXUS_TOKEN")
	// Some server parts log through the default logger (debug_panic's stack).
	slog.SetDefault(slog.New(slog.DiscardHandler))
	goleak.VerifyTestMain(m)
}

// debugOnly is a config with nothing but the four debug tools, so the
// tests know exactly which tools exist.
const debugOnly = `{"debug": true, "builtins": false, "skills": []}`

// startServer runs a real server on 127.0.0.1:0 in-process with cfgJSON
// (written to a temp file) and the given native tools; it stops at the end
// of the test.
func startServer(t testing.TB, cfgJSON string, native ...tool.Tool) *server.Server {
	t.Helper()
	return startServerIn(t, t.TempDir(), cfgJSON, native...)
}

// startServerIn is startServer with the config written to dir/toolnexus.json.
func startServerIn(t testing.TB, dir, cfgJSON string, native ...tool.Tool) *server.Server {
	t.Helper()
	srv, stop, err := serve(dir, cfgJSON, native...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return srv
}

func serve(dir, cfgJSON string, native ...tool.Tool) (*server.Server, func() error, error) {
	cfgPath := filepath.Join(dir, "toolnexus.json")
	if err := os.WriteFile(cfgPath, []byte(cfgJSON), 0o600); err != nil {
		return nil, nil, err
	}
	return servertest.Run(server.Options{
		ConfigPath:    cfgPath,
		Listen:        "127.0.0.1:0",
		MetricsListen: "-",
		Debug:         true,
		Workspace:     dir,
		Logger:        slog.New(slog.DiscardHandler),
		Native:        native,
	})
}

// result is one CLI run.
type result struct {
	code           int
	stdout, stderr string
}

// cli runs the CLI in-process with stdin and args.
func runCLI(t testing.TB, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := runContext(context.Background(), strings.NewReader(stdin), args, &out, &errb)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// against runs the CLI against srv.
func against(t testing.TB, srv *server.Server, args ...string) result {
	t.Helper()
	return runCLI(t, "", append([]string{"--addr", srv.Addr().String()}, args...)...)
}

func (r result) want(t testing.TB, code int) result {
	t.Helper()
	if r.code != code {
		t.Fatalf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, code, r.stdout, r.stderr)
	}
	return r
}

// nativeEcho is a native tool (source "custom") echoing its arguments.
func nativeEcho(name string) tool.Tool {
	return tool.Must(tool.Native(name, func(_ context.Context, args map[string]any) (any, error) {
		return args, nil
	}, tool.WithDescription("Echo for "+name+".\nSecond line is not shown in tables.")))
}

func TestRunWithRealStreams(t *testing.T) {
	// run is the entry point main uses; --help needs no server.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	code := run([]string{"--help"}, w, io.Discard)
	w.Close()
	out, _ := io.ReadAll(r)
	r.Close()
	if code != 0 || !strings.Contains(string(out), "Usage: toolnexus [global flags] COMMAND") {
		t.Fatalf("code %d, output:\n%s", code, out)
	}
}

const runMainEnv = "TOOLNEXUS_CLI_TEST_RUN_MAIN"

// cliProcess is the CLI as a child process (this test binary running main).
func cliProcess(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	return cmd
}

func TestProcessExitCodes(t *testing.T) {
	srv := startServer(t, debugOnly)
	addr := srv.Addr().String()
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"--addr", addr, "exec", "debug_echo"}, 0},
		{[]string{"--addr", addr, "exec", "debug_fail", "--args", `{"message":"x"}`}, 1},
		{[]string{"--addr", addr, "exec"}, 2},
	} {
		cmd := cliProcess(t, tc.args...)
		out, _ := cmd.CombinedOutput()
		if got := cmd.ProcessState.ExitCode(); got != tc.code {
			t.Errorf("%v: exit %d, want %d\n%s", tc.args, got, tc.code, out)
		}
	}
}

func TestProcessWatchEndsOnInterrupt(t *testing.T) {
	srv := startServer(t, debugOnly)
	cmd := cliProcess(t, "--addr", srv.Addr().String(), "watch", "--source", "debug")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(stdout)
	first, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(first, "revision ") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("first line %q: %v", first, err)
	}
	// The watch is streaming; Ctrl-C ends it with exit 0.
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(br)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("watch after Ctrl-C: %v\n%s%s", err, first, rest)
	}
	if !strings.Contains(string(rest), "+debug_sleep\n") {
		t.Errorf("snapshot incomplete:\n%s%s", first, rest)
	}
}
