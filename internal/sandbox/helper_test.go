package sandbox_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"golang.org/x/sys/unix"

	"github.com/toolnexus/toolnexus/internal/sandbox"
	"github.com/toolnexus/toolnexus/internal/testutil"
)

// parentOf is the parent pid of pid, from /proc.
func parentOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	// pid (comm) state ppid ...: comm may hold spaces, so split after ')'.
	rest := string(b[strings.LastIndexByte(string(b), ')')+2:])
	ppid, err := strconv.Atoi(strings.Fields(rest)[1])
	if err != nil {
		t.Fatal(err)
	}
	return ppid
}

func cmdline(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	return strings.TrimRight(string(b), "\x00")
}

// waitGone blocks until pid has exited, through a pidfd: no timing.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return
	}
	if err != nil {
		t.Fatalf("pidfd_open %d: %v", pid, err)
	}
	defer unix.Close(fd)
	for {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err == nil || !errors.Is(err, unix.EINTR) {
			return
		}
	}
}

// needHelper starts a long command and returns it and the helper that
// started it, or skips when commands start without a helper here.
func startSleep(t *testing.T, s *sandbox.Sandbox, f *fixture) (*sandbox.Process, int) {
	t.Helper()
	p, err := s.Start(exec.Command("/bin/sleep", "300"), &f.policy)
	if err != nil {
		t.Fatal(err)
	}
	helper := parentOf(t, p.Pid())
	if cmdline(helper) != "toolnexus-sandbox-helper" {
		p.Kill()
		p.Wait()
		t.Skipf("commands start without the helper here (parent %q)", cmdline(helper))
	}
	return p, helper
}

func TestHelperKilledMidCallThenRestarted(t *testing.T) {
	s, err := sandbox.New(sandbox.ModeAuto)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	need(t, s, sandbox.LayerUserNS, sandbox.LayerPIDNS)
	f := newFixture(t)
	p, helper := startSleep(t, s, f)
	cmd := p.Pid()
	if err := unix.Kill(helper, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err = p.Wait()
	if err == nil || !strings.Contains(err.Error(), "sandbox helper process ended") {
		t.Fatalf("Wait after the helper was killed: %v", err)
	}
	waitGone(t, cmd) // the command died with its helper

	out, code := f.sh(t, s, "echo again")
	if code != 0 || out != "again\n" {
		t.Fatalf("the next call after the helper died: %d %q", code, out)
	}
	p2, helper2 := startSleep(t, s, f)
	if helper2 == helper {
		t.Fatal("the dead helper was reused")
	}
	p2.Kill()
	p2.Wait()
}

func TestCloseEndsHelpersAndCommands(t *testing.T) {
	s, err := sandbox.New(sandbox.ModeAuto)
	if err != nil {
		t.Fatal(err)
	}
	need(t, s, sandbox.LayerUserNS, sandbox.LayerPIDNS)
	f := newFixture(t)
	var procs []*sandbox.Process
	var pids []int
	for _, network := range []bool{false, true} {
		f.policy.Network = network
		p, helper := startSleep(t, s, f)
		procs = append(procs, p)
		pids = append(pids, p.Pid(), helper)
	}
	if pids[1] == pids[3] {
		t.Fatal("network on and off share a helper")
	}
	s.Close()
	for _, p := range procs {
		if err := p.Wait(); err == nil {
			t.Error("a command outlived Close and exited cleanly")
		}
	}
	for _, pid := range pids {
		waitGone(t, pid)
	}
	if _, err := s.Start(exec.Command("/bin/true"), &f.policy); err == nil {
		t.Fatal("Start after Close")
	}
}

func TestConcurrentCommands(t *testing.T) {
	s := box(t)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := 0; g < 8; g++ {
		f := newFixture(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				want := fmt.Sprintf("%d-%d", g, i)
				cmd := exec.Command("/bin/sh", "-c", `echo "$0"; echo err >&2; exit 3`, want)
				var out, stderr strings.Builder
				cmd.Dir, cmd.Stdout, cmd.Stderr = f.ws, &out, &stderr
				cmd.Env = []string{}
				f.policy.Network = i%2 == 0
				p, err := s.Start(cmd, &f.policy)
				if err != nil {
					errs <- err
					return
				}
				err = p.Wait()
				var ee interface{ ExitCode() int }
				if !errors.As(err, &ee) || ee.ExitCode() != 3 || out.String() != want+"\n" || stderr.String() != "err\n" {
					errs <- fmt.Errorf("%s: %v %q %q", want, err, out.String(), stderr.String())
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestCommandHasNoCapabilities(t *testing.T) {
	s := box(t)
	need(t, s, sandbox.LayerUserNS)
	f := newFixture(t)
	self := testutil.SandboxExecutable(t)
	f.policy.ReadPaths = []string{filepath.Dir(self)}
	cmd := exec.Command(self)
	cmd.Env = []string{"SANDBOX_TEST_HELPER=caps"}
	out, code := f.run(t, s, cmd)
	if code != 0 || !strings.Contains(out, "eff=0,0 prm=0,0 inh=0,0 ambient-sys-admin=0 uid=65534") {
		t.Fatalf("capabilities in the sandbox: %d %s", code, out)
	}
}

// The helper's network namespace is shared by its commands: with seccomp
// off (sockets allowed), Landlock's abstract unix socket scope still
// keeps one command from connecting to another's socket.
func TestSharedNetworkNamespaceKeepsCommandsApart(t *testing.T) {
	restore := sandbox.DisableForTest(sandbox.LayerSeccomp)
	defer restore()
	s, err := sandbox.New(sandbox.ModeAuto)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	need(t, s, sandbox.LayerNetNS, sandbox.LayerLandlock)
	if l, _ := s.Status().Layer(sandbox.LayerLandlock); !strings.Contains(l.Detail, "abstract unix sockets") {
		t.Skip("Landlock here does not scope abstract unix sockets (ABI < 6); commands get a network namespace each")
	}
	f := newFixture(t)
	self := testutil.SandboxExecutable(t)
	f.policy.ReadPaths = []string{filepath.Dir(self)}
	name := "toolnexus-test-" + strconv.Itoa(os.Getpid())

	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	listener := exec.Command(self)
	listener.Env = []string{"SANDBOX_TEST_HELPER=abstract-listen", "SANDBOX_TEST_SOCKET=" + name}
	listener.Stdout, listener.Stderr = pw, pw
	lp, err := s.Start(listener, &f.policy)
	pw.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { lp.Kill(); lp.Wait() }()
	line, _ := bufio.NewReader(pr).ReadString('\n')
	if line != "listening\n" {
		t.Fatalf("listener: %q", line)
	}
	dial := exec.Command(self)
	dial.Env = []string{"SANDBOX_TEST_HELPER=abstract-dial", "SANDBOX_TEST_SOCKET=" + name}
	out, code := f.run(t, s, dial)
	if code == 0 || !strings.Contains(out, "operation not permitted") {
		t.Fatalf("one command reached another's abstract socket: %d %s", code, out)
	}
}

// System V IPC lives as long as its namespace: each command gets its
// own, so a segment one call leaves is not there for the next.
func TestIPCNamespacePerCommand(t *testing.T) {
	s := box(t)
	need(t, s, sandbox.LayerIPCNS)
	f := newFixture(t)
	self := testutil.SandboxExecutable(t)
	f.policy.ReadPaths = []string{filepath.Dir(self)}
	key := "SANDBOX_TEST_KEY=" + strconv.Itoa(0x7e57000+os.Getpid()%4096)
	run := func(action string) string {
		cmd := exec.Command(self)
		cmd.Env = []string{"SANDBOX_TEST_HELPER=" + action, key}
		out, _ := f.run(t, s, cmd)
		return out
	}
	if out := run("shm-create"); !strings.Contains(out, "<nil>") {
		t.Fatalf("shm-create: %s", out)
	}
	if out := run("shm-find"); !strings.Contains(out, "no such file or directory") {
		t.Fatalf("a later command found the first one's segment: %s", out)
	}
}

func TestSetupSpan(t *testing.T) {
	s := box(t)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	ctx, parent := tp.Tracer("test").Start(context.Background(), "execute_tool bash")
	f := newFixture(t)
	p, err := s.StartContext(ctx, exec.Command("/bin/true"), &f.policy)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	parent.End()
	spans := exp.GetSpans()
	if len(spans) != 2 || spans[0].Name != "sandbox.setup" || spans[0].Parent.SpanID() != parent.SpanContext().SpanID() {
		t.Fatalf("spans %v", spans.Snapshots())
	}

	// A start that fails is a failed span.
	exp.Reset()
	ctx, parent = tp.Tracer("test").Start(context.Background(), "execute_tool bash")
	if _, err := s.StartContext(ctx, exec.Command(f.ws), &f.policy); err == nil {
		t.Fatal("started a directory")
	}
	parent.End()
	if spans := exp.GetSpans(); len(spans) != 2 || spans[0].Status.Code.String() != "Error" {
		t.Fatalf("spans %v", spans.Snapshots())
	}
}
