package codemode

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
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
	// MemoryBytes is the child's address-space limit (RLIMIT_AS).
	MemoryBytes uint64
	// MaxOutput caps the script's return value and printed text, in bytes.
	MaxOutput int
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

// Run runs script in a fresh child process, answering its inner calls
// with call.
func Run(ctx context.Context, script string, lim Limits, call Caller) Result {
	if !entered.Load() {
		return Result{Error: ErrNoEntry.Error()}
	}
	exe, err := os.Executable()
	if err != nil {
		return Result{Error: "run_code: cannot find the server's binary: " + err.Error()}
	}
	// The child is killed a little after the interpreter's own deadline,
	// so a loop that interrupts cleanly reports the time limit, and one
	// that does not (stuck in Go code) still ends.
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout+time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe)
	// No inherited environment: the server's secrets never reach a script.
	cmd.Env = []string{childEnv + "=" + strconv.FormatUint(lim.MemoryBytes, 10), "GOMAXPROCS=1"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	var stderr bytes.Buffer
	cmd.Stderr = &limitedWriter{buf: &stderr, max: 4096}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return Result{Error: "run_code: " + err.Error()}
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return Result{Error: "run_code: " + err.Error()}
	}
	if err := cmd.Start(); err != nil {
		return Result{Error: "run_code: cannot start the interpreter: " + err.Error()}
	}
	r := converse(ctx, stdin, stdout, script, lim, call)
	stdin.Close()
	cmd.Process.Kill()
	werr := cmd.Wait()
	if !r.finished && r.Error == "" {
		if werr == nil {
			werr = errors.New("no answer")
		}
		r.Error = childDeath(ctx, lim, werr, stderr.String())
	}
	return r.Result
}

type outcome struct {
	Result
	finished bool
}

// converse speaks the JSON-lines protocol until the child is done, dies,
// or breaks a cap.
func converse(ctx context.Context, stdin io.Writer, stdout io.Reader, script string, lim Limits, call Caller) (r outcome) {
	b, _ := json.Marshal(start{Script: script, WallMS: lim.Timeout.Milliseconds(), MaxOutput: lim.MaxOutput})
	if _, err := stdin.Write(append(b, '\n')); err != nil {
		return r
	}
	// A line is at most the output cap plus room for an inner call's
	// arguments; a longer one ends the run.
	in := bufio.NewReaderSize(stdout, 64<<10)
	maxLine := lim.MaxOutput*2 + 1<<20
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
			if _, err := stdin.Write(append(b, '\n')); err != nil {
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
