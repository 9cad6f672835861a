package mcp

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/toolnexus/toolnexus/internal/egress"
	"github.com/toolnexus/toolnexus/internal/sandbox"
)

// child is a local server's process and the pipes toolnexus holds to it.
// The process is started by toolnexus itself (through the sandbox when the
// server asks for it, plainly otherwise) and the SDK talks to it over the
// pipes, so the confinement applies before the server's first instruction.
type child struct {
	proc   *sandbox.Process
	stdin  *os.File // write end of the child's stdin
	stdout *os.File // read end of the child's stdout
	stderr *os.File // read end of the child's stderr, copied to the tail writer
	copied chan struct{}
	tmp    string // the private temp dir of a sandboxed server; "" otherwise
	pgid   int

	reapOnce sync.Once
}

// startChild starts cmd with three pipes of its own, inside the sandbox
// when box confines, with policy p. tmp, when not "", is removed once the
// child is reaped. stderr lines go to w.
func startChild(box *sandbox.Sandbox, cmd *exec.Cmd, p *sandbox.Policy, w io.Writer, tmp string) (*child, error) {
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return r, w, err
	}
	inR, inW, err := pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := pipe()
	if err != nil {
		closeAll()
		return nil, err
	}
	errR, errW, err := pipe()
	if err != nil {
		closeAll()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if p == nil {
		p = &sandbox.Policy{}
	}
	proc, err := box.Start(cmd, p)
	// The child's ends are the child's: closing ours lets the reads see
	// end of file once the child (and whatever it started) has exited.
	inR.Close()
	outW.Close()
	errW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		errR.Close()
		return nil, err
	}
	c := &child{proc: proc, stdin: inW, stdout: outR, stderr: errR, copied: make(chan struct{}), tmp: tmp}
	if cmd.Process != nil {
		c.pgid = cmd.Process.Pid
	}
	go func() {
		defer close(c.copied)
		_, _ = io.Copy(w, errR)
	}()
	return c, nil
}

// stderrSettle bounds how long a failed start waits for the child's last
// words: a child that exits closes its stderr at once; one that lingers
// costs this much on the failure path only.
const stderrSettle = 500 * time.Millisecond

// settle waits, at most d, for the child to exit and its stderr to be
// copied to the end, so that an error quoting the stderr tail quotes the
// reason the child printed as it died (a missing key, a bad flag) rather
// than whatever the copy had reached when the pipe to it broke.
func (c *child) settle(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.proc.Done():
	case <-t.C:
		return
	}
	select {
	case <-c.copied:
	case <-t.C:
	}
}

// killGroup kills the child's process group: the server and what it
// started (in the sandbox, the whole PID namespace dies with the server).
func (c *child) killGroup() {
	if c.pgid > 0 { // kill(-0) would be toolnexus's own group
		_ = syscall.Kill(-c.pgid, syscall.SIGKILL)
	}
}

// reap ends the child for good: kills the group, waits for the process,
// closes the pipes (which ends the stderr copy even when a grandchild
// outside the group still holds it) and removes the temp dir. Safe to call
// more than once and from any goroutine.
func (c *child) reap() {
	c.reapOnce.Do(func() {
		c.killGroup()
		<-c.proc.Done()
		c.stdin.Close()
		c.stdout.Close()
		c.stderr.Close()
		<-c.copied
		if c.tmp != "" {
			_ = os.RemoveAll(c.tmp)
		}
	})
}

// pipeConn is what the session's connection (lineConn) reads and writes: the child's
// stdout and stdin. Closing it is the stdio shutdown: stdin is closed,
// the child gets grace to exit on its own, then its group is killed.
type pipeConn struct {
	c     *child
	grace time.Duration
}

func (p pipeConn) Read(b []byte) (int, error)  { return p.c.stdout.Read(b) }
func (p pipeConn) Write(b []byte) (int, error) { return p.c.stdin.Write(b) }

// reader and writer split pipeConn for lineTransport; only the writer's
// Close does anything (the shutdown), as the reader must keep reading
// until the child is gone.
type (
	pipeReader struct{ pipeConn }
	pipeWriter struct{ pipeConn }
)

func (pipeReader) Close() error { return nil }

func (p pipeWriter) Close() error {
	p.c.stdin.Close()
	t := time.NewTimer(p.grace)
	defer t.Stop()
	select {
	case <-p.c.proc.Done():
	case <-t.C:
		p.c.killGroup()
		<-p.c.proc.Done()
	}
	// Unblocks a read held up by a grandchild that kept stdout open.
	p.c.stdout.Close()
	return nil
}

// sandboxPolicy is the policy of a sandboxed local server: the server-wide
// sandbox settings (system paths, sandbox.readPaths, the masks, the
// limits) with the server's own read paths added, its network setting,
// read-write only its temp dir and its working directory, and no CPU
// limit (the server lives as long as the source, not one call).
func (s *Source) sandboxPolicy(tmp, dir string) sandbox.Policy {
	p := s.box.Policy
	p.ReadPaths = append(slices.Clip(p.ReadPaths), s.absPaths(s.cfg.Sandbox.ReadPaths)...)
	p.WritePaths = s.absPaths(s.cfg.Sandbox.WritePaths)
	if s.cfg.Sandbox.Network != nil {
		// The server's own network setting wins over sandbox.egress.
		p.Network = *s.cfg.Sandbox.Network
		p.Egress = nil
	}
	if px, ok := p.Egress.(*egress.Proxy); ok {
		// The server serves every caller: its connections are its own,
		// under sandbox.egress.tools.<server name> when that is set.
		p.Egress = px.Bind(egress.Call{Tool: s.name})
	}
	p.Workspace = dir
	p.TempDir = tmp
	p.Limits.CPU = 0
	return p
}

// absPaths resolves config paths against the config file's directory.
func (s *Source) absPaths(ps []string) []string {
	out := make([]string, 0, len(ps))
	for _, r := range ps {
		if !filepath.IsAbs(r) {
			r = filepath.Join(s.baseDir(), r)
		}
		if abs, err := filepath.Abs(r); err == nil {
			out = append(out, abs)
		}
	}
	return out
}

// sandboxed reports whether this server's children run confined: it asks
// for it and the server has a sandbox that is not off.
func (s *Source) sandboxed() bool {
	return s.cfg.Type == TypeLocal && s.cfg.Sandbox != nil && s.box.On()
}

// sandboxSummary is the one line ListSources shows for a sandboxed server.
func (s *Source) sandboxSummary() string {
	if !s.sandboxed() {
		return ""
	}
	p := s.sandboxPolicy("", "")
	var parts []string
	if p.Egress != nil {
		parts = append(parts, "network through the egress proxy (sandbox.egress)")
	} else if p.Network {
		parts = append(parts, "network on")
	} else {
		parts = append(parts, "network off")
	}
	rw := "read-write: its temp dir (HOME, TMPDIR)"
	if s.cfg.Cwd != "" {
		rw += ", its cwd"
	}
	if n := len(s.cfg.Sandbox.WritePaths); n > 0 {
		rw += fmt.Sprintf(", %d write path(s)", n)
	}
	parts = append(parts, rw)
	if n := len(s.cfg.Sandbox.ReadPaths); n > 0 {
		parts = append(parts, fmt.Sprintf("%d own read path(s)", n))
	}
	return "sandboxed (" + string(s.box.Box.Status().Mode) + "): " + strings.Join(parts, "; ")
}

// startLocal starts the server's command: confined when it is sandboxed,
// with its limits set by /bin/sh before the program execs, HOME and TMPDIR
// in a private temp dir the sandbox lets it write.
func (s *Source) startLocal(cmd *exec.Cmd, w io.Writer) (*child, error) {
	if !s.sandboxed() {
		return startChild(nil, cmd, nil, w, "")
	}
	tmp, err := os.MkdirTemp("", "toolnexus-mcp-")
	if err != nil {
		return nil, err
	}
	// A root server's sandboxed commands act as an unprivileged uid.
	if err := s.box.Box.Own(tmp); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	p := s.sandboxPolicy(tmp, cmd.Dir)
	argv := slices.Clone(cmd.Args)
	if filepath.IsAbs(cmd.Path) {
		argv[0] = cmd.Path // as resolved in the server's PATH
	}
	if wrapped := sandbox.WrapArgv(argv, s.box.ScriptLimits(p.Limits)); len(wrapped) != len(argv) {
		cmd.Path, cmd.Args = wrapped[0], wrapped
	}
	// The server's own env entries win over these: os/exec keeps the last
	// value of a duplicate, so they go first.
	cmd.Env = append([]string{"HOME=" + tmp, "TMPDIR=" + tmp}, withoutKeys(cmd.Env, "HOME", "TMPDIR", s.cfg.Environment)...)
	c, err := startChild(s.box.Box, cmd, &p, w, tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	return c, nil
}

// withoutKeys drops the named variables from env unless the server's own
// config sets them (those it keeps: the operator asked for them).
func withoutKeys(env []string, a, b string, own map[string]string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if _, mine := own[k]; (k == a || k == b) && !mine {
			continue
		}
		out = append(out, kv)
	}
	return out
}
