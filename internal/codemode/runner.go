package codemode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/toolnexus/toolnexus/internal/sandbox"
)

// ToolName is the name the core serves code mode under.
const ToolName = "run_code"

// Limits bound one run.
type Limits struct {
	// MaxCalls caps the inner tool calls of one run.
	MaxCalls int
	// Timeout is the run's wall-clock limit (the interpreter is
	// interrupted at it, and the child killed shortly after).
	Timeout time.Duration
	// MemoryBytes is the child's address-space limit (RLIMIT_AS) on top
	// of what it maps once started.
	MemoryBytes uint64
	// MaxOutput caps the script's return value and printed text, in bytes.
	MaxOutput int
	// MaxConcurrent caps the interpreters a Pool runs at once, and
	// MaxPerPrincipal those of one principal (0: no cap).
	MaxConcurrent, MaxPerPrincipal int
	// Sandbox is where the interpreter runs: the sandbox bash's commands
	// run in, with its masks and private directories, and nothing of the
	// interpreter's own — no workspace, temp dir, read or write path, no
	// network; only its own binary to execute. Nil (or a sandbox that is
	// off) starts it unconfined.
	Sandbox *sandbox.Runner
}

// Caller runs one inner call through the server's ordinary call path.
type Caller func(ctx context.Context, name string, args json.RawMessage) InnerResult

// Result is how a run ended.
type Result struct {
	// Value is the script's return value as JSON (nil when it returned nothing).
	Value json.RawMessage
	// Printed is what it printed.
	Printed string
	// Error says why the run failed ("" on success).
	Error string
	// Calls counts the inner calls it made.
	Calls int
}

// ErrNoEntry refuses to start a child from a program that never called
// EnterChild (it would run its own main instead).
var ErrNoEntry = errors.New("run_code: this program cannot start the code-mode child: call server.EnterSandboxHelper() first in main (server.Main does)")

// childArg0 is the interpreter's argv[0], what ps shows for it.
const childArg0 = "toolnexus-run_code"

// Run runs script in a fresh child process, answering its inner calls
// with call.
func Run(ctx context.Context, script string, lim Limits, call Caller) Result {
	if !entered.Load() {
		return Result{Error: ErrNoEntry.Error()}
	}
	// The child is killed a little after the interpreter's own deadline,
	// so a loop that interrupts cleanly reports the time limit, and one
	// that does not (stuck in Go code) still ends.
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout+time.Second)
	defer cancel()
	c, err := startChild(ctx, lim)
	if err != nil {
		return Result{Error: "run_code: cannot start the interpreter: " + err.Error()}
	}
	stop := context.AfterFunc(ctx, func() { _ = c.proc.Kill() })
	r := converse(ctx, c, script, lim, call)
	stop()
	c.stdin.Close()
	_ = c.proc.Kill()
	werr := c.proc.Wait()
	c.stdout.Close()
	if !r.finished && r.Error == "" {
		if werr == nil {
			werr = errors.New("no answer")
		}
		r.Error = childDeath(ctx, lim, werr, c.stderr.String())
	}
	return r.Result
}

// child is a started interpreter and our ends of its pipes.
type child struct {
	proc          *sandbox.Process
	stdin, stdout *os.File
	stderr        *bytes.Buffer
}

// startChild starts the interpreter: this program again, entered through
// EnterChild, with an empty environment (no secret of the server reaches
// it), in its own process group, dying with the server — in the sandbox
// when lim has one, as bash's commands run.
func startChild(ctx context.Context, lim Limits) (*child, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	c := &child{stdin: inW, stdout: outR, stderr: &bytes.Buffer{}}
	cmd := &exec.Cmd{
		// /proc/self/exe is reached without walking the binary's
		// directories, which the sandbox's uid may not search.
		Path: "/proc/self/exe", Args: []string{childArg0}, Dir: "/",
		Env:         []string{childEnv + "=1", "GOMAXPROCS=1"},
		Stdin:       inR,
		Stdout:      outW,
		Stderr:      &limitedWriter{buf: c.stderr, max: 4096},
		SysProcAttr: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true},
	}
	var box *sandbox.Sandbox
	pol := sandbox.Policy{ExecFiles: []string{"/proc/self/exe"}, Limits: sandbox.Limits{Processes: childThreads}}
	if lim.Sandbox != nil {
		box = lim.Sandbox.Box
		pol.Masks, pol.Private = lim.Sandbox.Policy.Masks, lim.Sandbox.Policy.Private
	}
	c.proc, err = box.StartContext(ctx, cmd, &pol)
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, err
	}
	return c, nil
}

// childThreads bounds the interpreter's tasks where the sandbox counts them
// (a pids group under a root server): the Go runtime's threads, and no
// process of its own — goja cannot start one.
const childThreads = 64

type outcome struct {
	Result
	finished bool
}

// converse speaks the JSON-lines protocol until the child is done, dies,
// or breaks a cap. The child says first that it is up; its address space
// is limited then, before it reads the script.
func converse(ctx context.Context, c *child, script string, lim Limits, call Caller) (r outcome) {
	// A line is at most the output cap plus room for an inner call's
	// arguments; a longer one ends the run.
	in := bufio.NewReaderSize(c.stdout, 64<<10)
	maxLine := lim.MaxOutput*2 + 1<<20
	if line, err := readLine(in, maxLine); err != nil || !bytes.Equal(line, readyLine) {
		return r
	}
	if err := limitMemory(c.proc.Pid(), lim.MemoryBytes); err != nil {
		r.Error, r.finished = "run_code: cannot limit the interpreter's memory: "+err.Error(), true
		return r
	}
	b, _ := json.Marshal(start{Script: script, WallMS: lim.Timeout.Milliseconds(), MaxOutput: lim.MaxOutput})
	if _, err := c.stdin.Write(append(b, '\n')); err != nil {
		return r
	}
	for {
		line, err := readLine(in, maxLine)
		if err != nil {
			if errors.Is(err, errLineTooLong) {
				r.Error = fmt.Sprintf("run_code: the script's output or a tool call's arguments passed the %d-byte limit", lim.MaxOutput)
				r.finished = true
			}
			return r
		}
		var m fromChild
		if json.Unmarshal(line, &m) != nil {
			return r
		}
		switch {
		case m.Done != nil:
			r.finished = true
			r.Value, r.Printed, r.Error = m.Done.Value, m.Done.Printed, m.Done.Error
			if len(r.Value)+len(r.Printed) > lim.MaxOutput {
				r.Value, r.Printed = nil, ""
				r.Error = fmt.Sprintf("run_code: the script's result passed the %d-byte output limit (limit what it returns or prints)", lim.MaxOutput)
			}
			return r
		case m.Call != nil:
			var ans InnerResult
			if r.Calls >= lim.MaxCalls {
				ans = InnerResult{Fatal: fmt.Sprintf("run_code: the script made more than %d tool calls (codeMode.maxCalls)", lim.MaxCalls)}
			} else {
				r.Calls++
				ans = call(ctx, m.Call.Name, m.Call.Arguments)
			}
			b, _ := json.Marshal(ans)
			if _, err := c.stdin.Write(append(b, '\n')); err != nil {
				return r
			}
		}
	}
}

var errLineTooLong = errors.New("line too long")

func readLine(in *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := in.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > max {
			return nil, errLineTooLong
		}
		if err == nil {
			return line, nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return nil, err
		}
	}
}

// childDeath explains a child that ended without an answer.
func childDeath(ctx context.Context, lim Limits, werr error, stderr string) string {
	switch {
	case ctx.Err() != nil:
		return fmt.Sprintf("run_code: the script ran past its time limit (%s) and was killed", lim.Timeout)
	case strings.Contains(stderr, "out of memory") || strings.Contains(stderr, "cannot allocate memory") || strings.Contains(stderr, "address space"):
		return fmt.Sprintf("run_code: the script ran out of memory (limit %d MiB, codeMode.memoryMB)", lim.MemoryBytes>>20)
	}
	first, _, _ := strings.Cut(strings.TrimSpace(stderr), "\n")
	return "run_code: the interpreter died: " + werr.Error() + ": " + first
}

type limitedWriter struct {
	buf *bytes.Buffer
	max int
}

func (w *limitedWriter) Write(p []byte) (int, error) {
	if room := w.max - w.buf.Len(); room > 0 {
		w.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
