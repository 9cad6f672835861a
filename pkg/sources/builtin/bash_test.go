package builtin_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

func TestBash(t *testing.T) {
	k := newKitCap(t, 1000)
	k.write("sub/file.txt", "x")
	tests := []struct {
		name string
		args any
		want want
	}{
		{"success", map[string]any{"command": "echo hello"},
			want{output: "hello\n", meta: map[string]any{"exitCode": 0}}},
		{"stdout and stderr combined", map[string]any{"command": "echo out; echo err >&2"},
			want{output: "out\nerr\n", meta: map[string]any{"exitCode": 0}}},
		{"no output", map[string]any{"command": "true", "description": "does nothing"},
			want{output: "", meta: map[string]any{"exitCode": 0}}},
		{"exit code", map[string]any{"command": "echo oops; exit 3"},
			want{output: "oops\n\nbash: command exited with code 3", isError: true, outcome: tool.OutcomeToolError, meta: map[string]any{"exitCode": 3}}},
		{"exit code without output", map[string]any{"command": "exit 7"},
			want{output: "\nbash: command exited with code 7", isError: true, meta: map[string]any{"exitCode": 7}}},
		{"killed by a signal", map[string]any{"command": "kill -TERM $$"},
			want{output: "\nbash: command exited with code 143", isError: true, meta: map[string]any{"exitCode": 143}}},
		{"workdir", map[string]any{"command": "cat file.txt", "workdir": "sub"},
			want{output: "x", meta: map[string]any{"exitCode": 0}}},
		{"runs in the workspace root", map[string]any{"command": "cat sub/file.txt"},
			want{output: "x", meta: map[string]any{"exitCode": 0}}},
		{"stdin is empty", map[string]any{"command": "cat"},
			want{output: "", meta: map[string]any{"exitCode": 0}}},
		{"output cap", map[string]any{"command": "head -c 5000 /dev/zero | tr '\\0' a"},
			want{output: strings.Repeat("a", 1000) + "\n[output truncated: 4000 bytes omitted]", meta: map[string]any{"exitCode": 0, "truncated": true}}},
		{"empty command", map[string]any{"command": "  "},
			want{output: "bash: command is required", isError: true, outcome: tool.OutcomeInvalidArguments}},
		{"missing command", `{}`,
			want{output: "bash: command is required", isError: true, outcome: tool.OutcomeInvalidArguments}},
		{"bad timeout", map[string]any{"command": "true", "timeout": 0},
			want{output: "bash: timeout must be a positive number of milliseconds", isError: true, outcome: tool.OutcomeInvalidArguments}},
		{"unknown argument", map[string]any{"command": "true", "cwd": "x"},
			want{output: `bash: invalid arguments: unknown field "cwd"; see the tool's input schema`, isError: true, outcome: tool.OutcomeInvalidArguments}},
		{"wrong type", map[string]any{"command": 5},
			want{output: `bash: invalid arguments: field "command" must be a string, not number`, isError: true, outcome: tool.OutcomeInvalidArguments}},
		{"workdir not a directory", map[string]any{"command": "true", "workdir": "sub/file.txt"},
			want{output: "bash: workdir is not a directory: sub/file.txt", isError: true}},
		{"workdir missing", map[string]any{"command": "true", "workdir": "nope"},
			want{output: "bash: workdir is not a directory: nope", isError: true}},
		{"workdir escapes", map[string]any{"command": "true", "workdir": "../"},
			want{output: "bash: path escapes the workspace: ../", isError: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			check(t, k.run("bash", tc.args), tc.want)
		})
	}
}

// The timeout kills the whole process group: the backgrounded sleep, which
// also holds the output pipe, must be gone when the call returns.
func TestBashTimeoutKillsGrandchild(t *testing.T) {
	k := newKit(t)
	res := k.run("bash", map[string]any{
		"command": "echo start; sleep 100 & echo $!; sleep 100",
		"timeout": 300,
	})
	prefix := "bash: command timed out after 300ms\nstart\n"
	if !strings.HasPrefix(res.Output, prefix) || !res.IsError || res.Resolved() != tool.OutcomeTimeout {
		t.Fatalf("result = %+v, want a timeout failure starting %q", res, prefix)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(res.Output, prefix)))
	if err != nil {
		t.Fatalf("no grandchild pid in %q", res.Output)
	}
	assertExited(t, pid)
}

// A background job outlives its shell only until the call returns, and the
// pipe it holds does not keep the call waiting.
func TestBashBackgroundJobDoesNotOutliveCall(t *testing.T) {
	k := newKit(t)
	res := k.run("bash", map[string]any{"command": "sleep 100 & echo $!"})
	if res.IsError {
		t.Fatalf("bash: %s", res.Output)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(res.Output))
	if err != nil {
		t.Fatalf("no pid in %q", res.Output)
	}
	assertExited(t, pid)
}

// A process that leaves the group (setsid) escapes the kill and keeps the
// pipe open; the call still returns, after a bounded grace period.
func TestBashHeldPipeDoesNotHang(t *testing.T) {
	if _, err := os.Stat("/usr/bin/setsid"); err != nil {
		t.Skip("setsid not installed")
	}
	k := newKit(t)
	res := k.run("bash", map[string]any{"command": "setsid sleep 100 & echo $!"})
	pid, err := strconv.Atoi(strings.TrimSpace(res.Output))
	if err != nil {
		t.Fatalf("no pid in %q", res.Output)
	}
	// It escaped the group by design; clean it up ourselves.
	_ = syscall.Kill(pid, syscall.SIGKILL)
	assertExited(t, pid)
	if res.IsError {
		t.Fatalf("bash: %s", res.Output)
	}
}

// Cancelling the caller's context kills the command and its children and
// reports a cancellation, not a tool error.
func TestBashCancel(t *testing.T) {
	k := newKit(t)
	fifo := filepath.Join(k.dir, "ready")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan tool.Result, 1)
	go func() {
		done <- k.runCtx(ctx, "bash", map[string]any{"command": "sleep 100 & echo $! > ready; wait"})
	}()
	// Opening the FIFO blocks until the command opens it: a handshake,
	// not a sleep.
	f, err := os.Open(fifo)
	if err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(f).ReadString('\n')
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	res := <-done
	check(t, res, want{output: "bash: canceled", isError: true, outcome: tool.OutcomeCanceled})
	assertExited(t, pid)
}

func TestBashCallerDeadline(t *testing.T) {
	k := newKit(t)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	res := k.runCtx(ctx, "bash", map[string]any{"command": "exec sleep 100"})
	check(t, res, want{output: "bash: deadline exceeded", isError: true, outcome: tool.OutcomeTimeout})
}

// assertExited waits, through a pidfd, until process pid has exited (a
// zombie awaiting its reaper counts as exited); it fails if the process is
// still running after a generous bound.
func assertExited(t *testing.T, pid int) {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return // already gone and reaped
	}
	if err != nil {
		t.Fatalf("pidfd_open(%d): %v", pid, err)
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 10_000)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			t.Fatalf("poll: %v", err)
		}
		if n == 0 {
			t.Fatalf("process %d is still running", pid)
		}
		return
	}
}
