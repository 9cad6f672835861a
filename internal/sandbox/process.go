package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"sync"
	"syscall"

	"go.opentelemetry.io/otel/attribute"
	"golang.org/x/sys/unix"

	"github.com/toolnexus/toolnexus/internal/telemetry"
)

// Process is a started command.
type Process struct {
	Cmd  *exec.Cmd
	done chan struct{}
	err  error

	// Started through the helper:
	pid     int
	started chan error
	exited  chan unix.WaitStatus
	stdin   *os.File // our end of a stdin pipe, closed when the command exits
	copies  sync.WaitGroup
	cgroup  string

	// With egress (egress.go): the proxy's listener in the command's
	// network namespace, as the helper sent it, then as served.
	egressFile *os.File
	egressLn   net.Listener
	egressDone chan struct{}
}

// Wait waits for the command to exit and returns its error: nil, an
// error with ExitCode() and Sys() (a syscall.WaitStatus) when it exited
// non-zero or was killed — *exec.ExitError or *ExitError — or why it
// could not be waited for.
func (p *Process) Wait() error {
	<-p.done
	return p.err
}

// Done is closed when the command has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Pid is the command's process ID (in the server's PID namespace).
func (p *Process) Pid() int {
	if p.pid != 0 {
		return p.pid
	}
	return p.Cmd.Process.Pid
}

// Signal sends sig to the command (not its descendants: signal its
// process group, -Pid(), for those).
func (p *Process) Signal(sig os.Signal) error { return p.Cmd.Process.Signal(sig) }

// Kill sends SIGKILL to the command.
func (p *Process) Kill() error { return p.Signal(os.Kill) }

// ExitError is the error of a command started through the helper that
// exited non-zero or was killed; it answers like *exec.ExitError.
type ExitError struct {
	Status syscall.WaitStatus
}

func (e *ExitError) Error() string {
	var res string
	switch {
	case e.Status.Exited():
		res = "exit status " + strconv.Itoa(e.Status.ExitStatus())
	case e.Status.Signaled():
		res = "signal: " + e.Status.Signal().String()
	case e.Status.Stopped():
		res = "stop signal: " + e.Status.StopSignal().String()
	default:
		res = "unknown wait status " + strconv.Itoa(int(e.Status))
	}
	if e.Status.CoreDump() {
		res += " (core dumped)"
	}
	return res
}

// ExitCode is the exit code, or -1 when the command was killed by a signal.
func (e *ExitError) ExitCode() int {
	if !e.Status.Exited() {
		return -1
	}
	return e.Status.ExitStatus()
}

// Sys is the syscall.WaitStatus.
func (e *ExitError) Sys() any { return e.Status }

// Start starts cmd confined by the policy; see StartContext.
func (s *Sandbox) Start(cmd *exec.Cmd, p *Policy) (*Process, error) {
	return s.StartContext(context.Background(), cmd, p)
}

// StartContext starts cmd confined by the policy. cmd must not be
// started; its Stdin, Stdout and Stderr are used as exec.Cmd uses them
// (an *os.File is handed to the command as it is, anything else through a
// pipe), and of its SysProcAttr the sandbox keeps Setpgid, Pgid and
// Setsid (other settings start the command the slower way, from the
// server). Wait on the returned Process, not on cmd; cmd.Process is set
// for its Pid and Signal. A traced ctx gets a child span sandbox.setup
// for the time it takes to start the command. ctx does not bound the
// command's life.
func (s *Sandbox) StartContext(ctx context.Context, cmd *exec.Cmd, p *Policy) (*Process, error) {
	if !s.On() {
		proc := &Process{Cmd: cmd, done: make(chan struct{})}
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		go func() { proc.err = cmd.Wait(); close(proc.done) }()
		return proc, nil
	}
	viaHelper := s.useHelper && s.helperErr.Load() == nil && helperCarries(cmd.SysProcAttr) && len(cmd.ExtraFiles) <= 8
	if p.Egress != nil {
		// The command's only way out is the proxy: sockets as with the
		// network on, in a network namespace of its own (egress.go).
		if !viaHelper || s.clone&unix.CLONE_NEWNET == 0 {
			return nil, ErrNoEgress
		}
		eg := *p
		eg.Network = true
		p = &eg
	}
	_, span := telemetry.Start(ctx, "sandbox.setup",
		attribute.Bool("sandbox.helper", viaHelper), attribute.Bool("sandbox.network", p.Network))
	var proc *Process
	var err error
	if viaHelper {
		proc, err = s.startHelped(ctx, cmd, p)
	} else {
		proc, err = s.startDirect(cmd, p)
	}
	telemetry.Fail(span, err)
	span.End()
	return proc, err
}

// helperCarries reports whether the helper can start a command with sys:
// it carries the process group and session settings only.
func helperCarries(sys *syscall.SysProcAttr) bool {
	if sys == nil {
		return true
	}
	c := *sys
	c.Setpgid, c.Pgid, c.Setsid, c.Pdeathsig = false, 0, false, 0
	return reflect.ValueOf(c).IsZero()
}

// startHelped starts cmd through the helper for p.Network: the server
// builds the call's Landlock ruleset and picks its pids group, and sends
// them with the command's files; the helper applies them on a thread of
// its own and forks the command from it.
func (s *Sandbox) startHelped(ctx context.Context, cmd *exec.Cmd, p *Policy) (*Process, error) {
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	if cmd.Process != nil {
		return nil, errors.New("exec: already started")
	}
	h, err := s.helperFor(p.Network)
	if err != nil {
		if !errors.Is(err, errClosed) {
			s.helperErr.Store(&err)
			return s.startDirect(cmd, p)
		}
		return nil, err
	}
	proc := &Process{
		Cmd:     cmd,
		done:    make(chan struct{}),
		started: make(chan error, 1),
		exited:  make(chan unix.WaitStatus, 1),
	}
	req := s.newStartRequest(cmd, p)
	files := &sendFiles{}
	fail := func(err error) (*Process, error) {
		files.close()
		if proc.stdin != nil {
			proc.stdin.Close()
		}
		if proc.cgroup != "" {
			s.pids.release(proc.cgroup)
		}
		return nil, err
	}
	if err := files.stdio(cmd, proc); err != nil {
		return fail(err)
	}
	req.nfiles = uint32(len(files.fds))
	if err := s.confinement(files, proc, p, &req); err != nil {
		return fail(err)
	}
	if err := s.view(files, p, &req); err != nil {
		return fail(err)
	}

	h.pending.Store(req.id, proc)
	err = h.w.send(msgStart, req.encode(), files.fds)
	files.close()
	if err != nil {
		h.pending.Delete(req.id)
		return fail(fmt.Errorf("%w: %v", errHelperGone, err))
	}
	if err := s.waitStarted(ctx, h, proc, req.id); err != nil {
		if errors.Is(err, errAbandoned) {
			return nil, err
		}
		return fail(err)
	}
	if p.Egress != nil {
		if err := proc.serveEgress(p.Egress); err != nil {
			_ = proc.Cmd.Process.Kill()
			go s.finish(h, proc)
			return nil, err
		}
	}
	proc.copies.Add(len(files.copies))
	for _, c := range files.copies {
		go func() {
			defer proc.copies.Done()
			c()
		}()
	}
	go s.finish(h, proc)
	return proc, nil
}

// newStartRequest is the start request for cmd under p, without its files.
func (s *Sandbox) newStartRequest(cmd *exec.Cmd, p *Policy) startRequest {
	req := startRequest{id: nextID.Add(1), path: cmd.Path, dir: cmd.Dir, argv: cmd.Args, env: cmd.Env, unshare: uint64(s.perCall)}
	if req.env == nil {
		req.env = os.Environ()
	}
	if p.Egress != nil {
		req.env = proxyEnv(req.env)
		req.flags |= reqEgress
	}
	if !p.Network && !s.sharedNet && s.clone&unix.CLONE_NEWNET != 0 {
		req.unshare |= unix.CLONE_NEWNET
	}
	if sys := cmd.SysProcAttr; sys != nil {
		if sys.Setpgid {
			req.flags |= reqSetpgid
			req.pgid = uint32(sys.Pgid)
		}
		if sys.Setsid {
			req.flags |= reqSetsid
		}
	}
	if s.nnp {
		req.flags |= reqNoNewPrivs
	}
	if s.nprocUserNS && p.Limits.Processes > 0 {
		req.flags |= reqNewUser
	}
	if s.prog[p.Network] != nil {
		req.flags |= reqSeccomp
	}
	return req
}

// sendFiles are the descriptors a start request carries, ours to close
// once they are sent, and the copies between the command's pipes and the
// caller's readers and writers, run once the command has started.
type sendFiles struct {
	fds     []int
	sent    []io.Closer
	copies  []func()
	devNull *os.File
}

// close closes our ends of what was (or would have been) sent.
func (f *sendFiles) close() {
	for _, c := range f.sent {
		c.Close()
	}
	f.sent = nil
}

// null is /dev/null, opened once per command.
func (f *sendFiles) null() (*os.File, error) {
	if f.devNull == nil {
		n, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
		if err != nil {
			return nil, err
		}
		f.devNull = n
		f.sent = append(f.sent, n)
	}
	return f.devNull, nil
}

// stdio adds the command's stdin, stdout, stderr and extra files: a file
// as it is, nil as /dev/null, anything else through a pipe and a copy.
func (f *sendFiles) stdio(cmd *exec.Cmd, proc *Process) error {
	switch r := cmd.Stdin.(type) {
	case nil:
		if err := f.sendFile(nil); err != nil {
			return err
		}
	case *os.File:
		f.fds = append(f.fds, int(r.Fd()))
	default:
		pr, pw, err := os.Pipe()
		if err != nil {
			return err
		}
		f.sent = append(f.sent, pr)
		proc.stdin = pw
		f.fds = append(f.fds, int(pr.Fd()))
		f.copies = append(f.copies, func() {
			_, _ = io.Copy(pw, r)
			pw.Close()
		})
	}
	if err := f.output(cmd); err != nil {
		return err
	}
	for _, x := range cmd.ExtraFiles {
		if err := f.sendFile(x); err != nil {
			return err
		}
	}
	return nil
}

// sendFile adds file as it is, or /dev/null when file is nil: how each of
// stdin, stdout, stderr and the extra files is sent when it needs no pipe.
func (f *sendFiles) sendFile(file *os.File) error {
	if file == nil {
		n, err := f.null()
		if err != nil {
			return err
		}
		file = n
	}
	f.fds = append(f.fds, int(file.Fd()))
	return nil
}

// output adds stdout and stderr: one pipe when both are the same writer,
// as exec does.
func (f *sendFiles) output(cmd *exec.Cmd) error {
	var outPipe *os.File
	for i, wr := range []io.Writer{cmd.Stdout, cmd.Stderr} {
		switch w := wr.(type) {
		case nil:
			if err := f.sendFile(nil); err != nil {
				return err
			}
		case *os.File:
			f.fds = append(f.fds, int(w.Fd()))
		default:
			if i == 1 && outPipe != nil && sameWriter(cmd.Stdout, cmd.Stderr) {
				f.fds = append(f.fds, int(outPipe.Fd()))
				continue
			}
			pr, pw, err := os.Pipe()
			if err != nil {
				return err
			}
			f.sent = append(f.sent, pw)
			outPipe = pw
			f.fds = append(f.fds, int(pw.Fd()))
			f.copies = append(f.copies, func() {
				_, _ = io.Copy(w, pr)
				pr.Close()
			})
		}
	}
	return nil
}

// confinement adds the call's Landlock ruleset and its pids group to the
// request.
func (s *Sandbox) confinement(f *sendFiles, proc *Process, p *Policy, req *startRequest) error {
	if s.abi > 0 {
		fd, err := s.ruleset(p)
		if err != nil {
			return fmt.Errorf("sandbox: landlock: %w", err)
		}
		f.sent = append(f.sent, os.NewFile(uintptr(fd), "landlock-ruleset"))
		f.fds = append(f.fds, fd)
		req.flags |= reqRuleset
	}
	if s.pids != nil && p.Limits.Processes > 0 {
		dir, err := s.pids.acquire(p.Limits.Processes + 1) // +1: the forking thread
		if err != nil {
			return fmt.Errorf("sandbox: pids cgroup: %w", err)
		}
		proc.cgroup = dir
		tasks, err := os.OpenFile(dir+"/tasks", os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("sandbox: pids cgroup: %w", err)
		}
		f.sent = append(f.sent, tasks)
		f.fds = append(f.fds, int(tasks.Fd()))
		req.flags |= reqCgroup
	}
	return nil
}

// errAbandoned marks a start the caller stopped waiting for: the command
// is left to abandon, which kills, reaps and releases it.
var errAbandoned = errors.New("sandbox: waiting for the helper to start the command")

// waitStarted waits for the helper's reply to start request id, bounded
// by ctx and by the helper's life.
func (s *Sandbox) waitStarted(ctx context.Context, h *helper, proc *Process, id uint64) error {
	select {
	case err := <-proc.started:
		return err
	case <-ctx.Done():
		go s.abandon(h, proc)
		return fmt.Errorf("%w: %w", errAbandoned, ctx.Err())
	case <-h.dead:
		select {
		case err := <-proc.started:
			return err
		default:
			h.pending.Delete(id)
			return fmt.Errorf("%w before the command started: %v", errHelperGone, h.err)
		}
	}
}

// abandon ends a command whose caller stopped waiting for its start: it
// is killed as soon as it has started, and reaped and released as any.
func (s *Sandbox) abandon(h *helper, p *Process) {
	var err error
	select {
	case err = <-p.started:
	case <-h.dead:
		err = errHelperGone
	}
	if err == nil {
		_ = p.Cmd.Process.Kill()
		s.finish(h, p)
		return
	}
	if p.stdin != nil {
		p.stdin.Close()
	}
	if p.cgroup != "" {
		s.pids.release(p.cgroup)
	}
}

// finish waits for the helper's word that the command exited (or for
// the helper's end, which kills the command), then for its output.
func (s *Sandbox) finish(h *helper, p *Process) {
	var err error
	select {
	case ws := <-p.exited:
		err = exitErr(ws)
	case <-h.dead:
		select {
		case ws := <-p.exited:
			err = exitErr(ws)
		default:
			err = fmt.Errorf("%w while the command ran, and the command with it", errHelperGone)
		}
	}
	if p.stdin != nil {
		p.stdin.Close()
	}
	p.stopEgress()
	p.copies.Wait()
	if p.cgroup != "" {
		s.pids.release(p.cgroup)
	}
	p.err = err
	close(p.done)
}

func exitErr(ws unix.WaitStatus) error {
	if ws.Exited() && ws.ExitStatus() == 0 {
		return nil
	}
	return &ExitError{Status: syscall.WaitStatus(ws)}
}

// sameWriter is exec's test for Stdout and Stderr being one writer.
func sameWriter(a, b io.Writer) (same bool) {
	defer func() {
		if recover() != nil {
			same = false
		}
	}()
	return a == b
}
