package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

const (
	// DefaultBashTimeout applies when the call gives no timeout.
	DefaultBashTimeout = 60 * time.Second
	// maxBashTimeout keeps a huge timeout argument from overflowing.
	maxBashTimeout = 24 * time.Hour
	// pipeGrace is how long output is still read after the command's
	// process group is gone. Only a process that left the group (setsid)
	// can still hold the pipe then; it must not hold the call hostage.
	pipeGrace = 2 * time.Second
)

type bashArgs struct {
	Command     string `json:"command"`
	Workdir     string `json:"workdir"`
	Timeout     *int64 `json:"timeout"`
	Description string `json:"description"`
}

// shellPath picks the interpreter once, when the tools are built: bash when
// it is installed (the tool is called bash and models write bash), else the
// POSIX /bin/sh.
func shellPath() string {
	if p, err := exec.LookPath("bash"); err == nil {
		return p
	}
	return "/bin/sh"
}

func (t *toolset) bash(ctx context.Context, c tool.Call) tool.Result {
	var a bashArgs
	if r := decodeArgs("bash", c, &a); r != nil {
		return *r
	}
	if strings.TrimSpace(a.Command) == "" {
		return *invalid("bash: command is required")
	}
	timeout := DefaultBashTimeout
	timeoutMS := timeout.Milliseconds()
	if a.Timeout != nil {
		if *a.Timeout <= 0 {
			return *invalid("bash: timeout must be a positive number of milliseconds")
		}
		timeoutMS = *a.Timeout
		timeout = maxBashTimeout
		if timeoutMS < maxBashTimeout.Milliseconds() {
			timeout = time.Duration(timeoutMS) * time.Millisecond
		}
	}
	dir := t.ws.Root()
	if a.Workdir != "" {
		var r *tool.Result
		if dir, r = t.resolve("bash", a.Workdir); r != nil {
			return *r
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return fail("bash: workdir is not a directory: %s", a.Workdir)
		}
	}
	if ctx.Err() != nil {
		return tool.ContextResult(ctx, "bash")
	}

	run, err := t.startShell(ctx, t.limitFileSize(a.Command), dir, timeout)
	if err != nil {
		return fail("bash: cannot start %s: %v", t.shell, err)
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()

	var waitErr error
	var stoppedBy string
	select {
	case waitErr = <-run.waited:
	case <-timer.C:
		stoppedBy = "timeout"
		run.killGroup()
		waitErr = <-run.waited
	case <-ctx.Done():
		stoppedBy = "context"
		run.killGroup()
		waitErr = <-run.waited
	}
	// Background jobs the command started (`sleep 100 &`) die with it: a
	// tool call must not leave processes behind.
	run.killGroup()
	run.drain(ctx)

	out, truncated := run.out.Text()
	meta := map[string]any{}
	if truncated {
		meta["truncated"] = true
	}
	switch stoppedBy {
	case "timeout":
		meta["timedOut"] = true
		return tool.Result{
			Output:   fmt.Sprintf("bash: command timed out after %dms\n%s", timeoutMS, out),
			IsError:  true,
			Outcome:  tool.OutcomeTimeout,
			Metadata: meta,
		}
	case "context":
		r := tool.ContextResult(ctx, "bash")
		if out != "" {
			r.Output += "\n" + out
		}
		r.Metadata = meta
		return r
	}

	code := exitCode(waitErr)
	meta["exitCode"] = code
	if code != 0 {
		return tool.Failure(fmt.Sprintf("%s\nbash: command exited with code %d", out, code), meta).Refused(t.limitRefusal(code))
	}
	return tool.Success(out, meta)
}

// shellRun is one running command: its own process group, one pipe for
// stdout and stderr together, read by one goroutine into a capped buffer.
type shellRun struct {
	cmd    *exec.Cmd
	pgid   int
	pipe   *os.File
	out    *capWriter
	read   chan struct{}
	waited chan error
}

func (t *toolset) startShell(ctx context.Context, command, dir string, timeout time.Duration) (*shellRun, error) {
	// The pipe is ours, not exec's: exec.Cmd.Wait would wait for its copying
	// goroutine, which blocks as long as any grandchild holds the pipe. With
	// our own pipe, Wait returns when the shell exits, and the reader can be
	// cut loose with a deadline.
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(t.shell, "-c", command)
	cmd.Dir = dir
	cmd.Env = t.bashEnv // never the server's own environment: bash_env.go
	cmd.Stdout = pw
	cmd.Stderr = pw
	// Its own process group, so one signal reaches the command and
	// everything it started.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	wait, err := t.startCmd(ctx, cmd, timeout) // in the sandbox when on: bash_sandbox.go
	if err != nil {
		pr.Close()
		pw.Close()
		return nil, err
	}
	pw.Close()
	r := &shellRun{
		cmd:    cmd,
		pgid:   cmd.Process.Pid,
		pipe:   pr,
		out:    newCapWriter(t.cap),
		read:   make(chan struct{}),
		waited: make(chan error, 1),
	}
	go func() {
		defer close(r.read)
		_, _ = io.Copy(liveOutput(ctx, r.out), pr)
	}()
	go func() { r.waited <- wait() }()
	return r, nil
}

// killGroup sends SIGKILL to the whole process group. ESRCH (nothing left)
// is the normal case after a clean exit.
func (r *shellRun) killGroup() {
	_ = syscall.Kill(-r.pgid, syscall.SIGKILL)
}

// drain waits for the reader to reach end of file, which happens once every
// process holding the pipe has exited, but no longer than pipeGrace or the
// caller's context allow.
func (r *shellRun) drain(ctx context.Context) {
	grace := time.NewTimer(pipeGrace)
	defer grace.Stop()
	select {
	case <-r.read:
	case <-grace.C:
	case <-ctx.Done():
	}
	_ = r.pipe.SetReadDeadline(time.Now())
	<-r.read
	r.pipe.Close()
}

// exitCode follows the shell's convention: a command killed by signal N
// reports 128+N.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var exitErr interface { // *exec.ExitError, or the sandbox's
		ExitCode() int
		Sys() any
	}
	if errors.As(err, &exitErr) {
		if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return exitErr.ExitCode()
	}
	return -1
}
