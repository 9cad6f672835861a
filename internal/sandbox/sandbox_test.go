package sandbox_test

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/sys/unix"

	"github.com/toolnexus/toolnexus/internal/sandbox"
	"github.com/toolnexus/toolnexus/internal/testutil"
)

// TestMain doubles as the helper program some attacks need (a unix
// socket, a prctl query): run with SANDBOX_TEST_HELPER set, the test
// binary performs that one action inside the sandbox and exits.
func TestMain(m *testing.M) {
	sandbox.EnterHelper()
	if action := os.Getenv("SANDBOX_TEST_HELPER"); action != "" {
		os.Exit(helper(action))
	}
	goleak.VerifyTestMain(closingShared{m})
}

// closingShared closes the shared sandbox (ending its helpers and their
// goroutines) after the tests and before goleak looks.
type closingShared struct{ m *testing.M }

func (c closingShared) Run() int {
	code := c.m.Run()
	shared.Close()
	return code
}

func helper(action string) int {
	switch action {
	case "unix":
		c, err := net.Dial("unix", os.Getenv("SANDBOX_TEST_SOCKET"))
		if err != nil {
			fmt.Println("dial:", err)
			return 1
		}
		c.Close()
		fmt.Println("connected")
		return 0
	case "spawn":
		// Forks without a shell's retries: the first refused fork ends it.
		for i := 0; i < 40; i++ {
			if err := exec.Command("/bin/sleep", "100").Start(); err != nil {
				fmt.Printf("fork %d: %v\n", i, err)
				return 1
			}
		}
		fmt.Println("forked 40")
		return 0
	case "caps":
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var d [2]unix.CapUserData
		if err := unix.Capget(&hdr, &d[0]); err != nil {
			fmt.Println("capget:", err)
			return 1
		}
		amb, _ := unix.PrctlRetInt(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_IS_SET, unix.CAP_SYS_ADMIN, 0, 0)
		fmt.Printf("eff=%x,%x prm=%x,%x inh=%x,%x ambient-sys-admin=%d uid=%d\n",
			d[0].Effective, d[1].Effective, d[0].Permitted, d[1].Permitted, d[0].Inheritable, d[1].Inheritable, amb, os.Getuid())
		return 0
	case "abstract-listen":
		ln, err := net.Listen("unix", "@"+os.Getenv("SANDBOX_TEST_SOCKET"))
		if err != nil {
			fmt.Println("listen:", err)
			return 1
		}
		fmt.Println("listening")
		c, err := ln.Accept()
		if err == nil {
			fmt.Println("accepted")
			c.Close()
		}
		return 0
	case "abstract-dial":
		c, err := net.Dial("unix", "@"+os.Getenv("SANDBOX_TEST_SOCKET"))
		if err != nil {
			fmt.Println("dial:", err)
			return 1
		}
		c.Close()
		fmt.Println("connected")
		return 0
	case "shm-create", "shm-find":
		key, _ := strconv.Atoi(os.Getenv("SANDBOX_TEST_KEY"))
		flag := 0
		if action == "shm-create" {
			flag = unix.IPC_CREAT | 0o600
		}
		id, err := unix.SysvShmGet(key, 4096, flag)
		fmt.Println("shmget", id, err)
		return 0
	case "nnp":
		v, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
		fmt.Println("no_new_privs", v, err)
		return 0
	}
	return 2
}

var shared *sandbox.Sandbox

func box(t *testing.T) *sandbox.Sandbox {
	t.Helper()
	if shared == nil {
		s, err := sandbox.New(sandbox.ModeAuto)
		if err != nil {
			t.Fatalf("New(auto): %v", err)
		}
		t.Log(s.Status())
		shared = s
	}
	return shared
}

// need skips the test when the layer is missing, as Status reports it.
func need(t *testing.T, s *sandbox.Sandbox, layers ...string) {
	t.Helper()
	for _, name := range layers {
		if l, _ := s.Status().Layer(name); !l.Active {
			t.Skipf("Status says layer %s is missing on this machine (%s); its attack is not run", name, l.Detail)
		}
	}
}

type fixture struct {
	ws, tmp string
	policy  sandbox.Policy
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ws := realDir(t)
	tmp := realDir(t)
	return &fixture{ws: ws, tmp: tmp, policy: sandbox.Policy{Workspace: ws, TempDir: tmp, Limits: sandbox.DefaultLimits}}
}

func realDir(t *testing.T) string {
	t.Helper()
	return testutil.SandboxDir(t)
}

// sh runs a bash script in the sandbox and returns its combined output
// and exit code.
func (f *fixture) sh(t *testing.T, s *sandbox.Sandbox, script string) (string, int) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash on this machine")
	}
	script = sandbox.LimitScript(sandbox.FlavorOf(bash), f.policy.Limits) + script
	return f.run(t, s, exec.Command(bash, "-c", script))
}

func (f *fixture) run(t *testing.T, s *sandbox.Sandbox, cmd *exec.Cmd) (string, int) {
	t.Helper()
	var out bytes.Buffer
	cmd.Dir = f.ws
	cmd.Stdout = &out
	cmd.Stderr = &out
	cmd.Env = append(cmd.Env, "PATH=/usr/local/bin:/usr/bin:/bin", "TMPDIR="+f.tmp)
	p, err := s.Start(cmd, &f.policy)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	err = p.Wait()
	code := 0
	var ee interface {
		ExitCode() int
		Sys() any
	}
	if errors.As(err, &ee) {
		code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = -int(ws.Signal())
		}
	} else if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	return out.String(), code
}

func TestStatusListsEveryLayer(t *testing.T) {
	s := box(t)
	st := s.Status()
	if st.Mode != sandbox.ModeAuto {
		t.Fatalf("mode = %q", st.Mode)
	}
	for _, name := range []string{sandbox.LayerUserNS, sandbox.LayerPIDNS, sandbox.LayerNetNS, sandbox.LayerIPCNS,
		sandbox.LayerNoNewPrivs, sandbox.LayerLandlock, sandbox.LayerSeccomp, sandbox.LayerLimits, sandbox.LayerProcesses} {
		l, ok := st.Layer(name)
		if !ok {
			t.Errorf("Status has no layer %s", name)
			continue
		}
		if l.Detail == "" {
			t.Errorf("layer %s says nothing about itself", name)
		}
		if !l.Active && !strings.Contains(st.String(), name+" (") {
			t.Errorf("missing layer %s is not named with its reason in %q", name, st.String())
		}
	}
	req, err := sandbox.New(sandbox.ModeRequired)
	req.Close()
	if missing := st.Missing(); len(missing) > 0 {
		var me *sandbox.MissingError
		if !errors.As(err, &me) {
			t.Fatalf("required with %d missing layers: err = %v", len(missing), err)
		}
	} else if err != nil {
		t.Fatalf("required with every layer present: %v", err)
	}
}

func TestRequiredRefusesAMissingLayer(t *testing.T) {
	restore := sandbox.DisableForTest(sandbox.LayerLandlock)
	defer restore()
	s, err := sandbox.New(sandbox.ModeRequired)
	if err == nil {
		s.Close()
		t.Fatal("required started without Landlock")
	}
	var me *sandbox.MissingError
	if !errors.As(err, &me) || !strings.Contains(err.Error(), "missing landlock: turned off by a test") {
		t.Fatalf("err = %v", err)
	}

	// auto runs on without it, and says so.
	a, err := sandbox.New(sandbox.ModeAuto)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if a.Status().Active(sandbox.LayerLandlock) || !strings.Contains(a.Status().String(), "missing: landlock (turned off by a test)") {
		t.Fatalf("status = %s", a.Status())
	}
	f := newFixture(t)
	if out, code := f.sh(t, a, "echo ok"); code != 0 || out != "ok\n" {
		t.Fatalf("auto without landlock: %q, %d", out, code)
	}
}

func TestFilesystemOnlyWorkspaceAndTemp(t *testing.T) {
	s := box(t)
	need(t, s, sandbox.LayerLandlock)
	f := newFixture(t)
	outside := realDir(t)
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("s3cret"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := f.sh(t, s, `set -u
echo w > in-workspace && echo ws-ok
echo t > "$TMPDIR/in-temp" && echo tmp-ok
head -c 20 /etc/passwd >/dev/null && echo etc-ok
cat `+outside+`/secret; echo "read-outside=$?"
echo x > `+outside+`/new; echo "write-outside=$?"
ls `+outside+`; echo "list-outside=$?"
ls /root; echo "list-root=$?"
touch /usr/x; echo "write-usr=$?"`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	for _, want := range []string{"ws-ok", "tmp-ok", "etc-ok", "read-outside=1", "write-outside=1", "list-outside=2", "list-root=2", "write-usr=1"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "s3cret") {
		t.Fatalf("read a file outside the workspace:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); err == nil {
		t.Fatal("wrote a file outside the workspace")
	}
}

func TestMasksBelowReadablePaths(t *testing.T) {
	s := box(t)
	need(t, s, sandbox.LayerLandlock)
	f := newFixture(t)
	ro := realDir(t)
	for name, body := range map[string]string{"a.txt": "visible", "conf/server.key": "KEY", "conf/deep/x": "DEEP", "other/b": "ok-b"} {
		p := filepath.Join(ro, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o644)
	}
	f.policy.ReadPaths = []string{ro}
	f.policy.Masks = []string{filepath.Join(ro, "conf")}
	out, _ := f.sh(t, s, `cat `+ro+`/a.txt `+ro+`/other/b; echo
cat `+ro+`/conf/server.key; echo "key=$?"
cat `+ro+`/conf/deep/x; echo "deep=$?"
echo new > top && cat top && rm top && echo rw-ok`)
	for _, want := range []string{"visibleok-b", "key=1", "deep=1", "new\nrw-ok"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
	for _, leak := range []string{"KEY", "DEEP"} {
		if strings.Contains(out, leak) {
			t.Fatalf("masked content %q leaked:\n%s", leak, out)
		}
	}
}

func TestServerProcessUnreachable(t *testing.T) {
	s := box(t)
	need(t, s, sandbox.LayerPIDNS, sandbox.LayerLandlock)
	f := newFixture(t)
	os.Setenv("SANDBOX_TEST_SECRET", "hunter2")
	defer os.Unsetenv("SANDBOX_TEST_SECRET")
	pid := strconv.Itoa(os.Getpid())
	out, _ := f.sh(t, s, `cat /proc/`+pid+`/environ; echo "environ=$?"
kill -9 `+pid+`; echo "kill=$?"
ls /proc >/dev/null; echo "proc=$?"
echo "me=$$"`)
	for _, want := range []string{"environ=1", "kill=1", "proc=2", "me=1"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "hunter2") {
		t.Fatal("read the server's environment")
	}
}

func TestNetworkOffAndOn(t *testing.T) {
	s := box(t)
	need(t, s, sandbox.LayerNetNS)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan string, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b := make([]byte, 4)
			n, _ := c.Read(b)
			c.Close()
			got <- string(b[:n])
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	f := newFixture(t)
	out, _ := f.sh(t, s, `echo -n ping > /dev/tcp/127.0.0.1/`+port+`; echo "connect=$?"`)
	if !strings.Contains(out, "connect=1") {
		t.Fatalf("network off, connect to the host's loopback: %s", out)
	}
	f.policy.Network = true
	out, _ = f.sh(t, s, `echo -n ping > /dev/tcp/127.0.0.1/`+port+`; echo "connect=$?"`)
	if !strings.Contains(out, "connect=0") || <-got != "ping" {
		t.Fatalf("network on: %s", out)
	}
}

func TestUnixSocketsAndNoNewPrivs(t *testing.T) {
	s := box(t)
	need(t, s, sandbox.LayerSeccomp, sandbox.LayerNoNewPrivs)
	f := newFixture(t)
	sock := filepath.Join(f.ws, "s.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	self := testutil.SandboxExecutable(t)
	f.policy.ReadPaths = []string{filepath.Dir(self)}
	for _, network := range []bool{false, true} {
		f.policy.Network = network
		cmd := exec.Command(self)
		cmd.Env = []string{"SANDBOX_TEST_HELPER=unix", "SANDBOX_TEST_SOCKET=" + sock}
		if out, code := f.run(t, s, cmd); code == 0 || !strings.Contains(out, "operation not permitted") {
			t.Fatalf("network=%v: a unix socket connected: %d %s", network, code, out)
		}
	}
	cmd := exec.Command(self)
	cmd.Env = []string{"SANDBOX_TEST_HELPER=nnp"}
	if out, _ := f.run(t, s, cmd); !strings.Contains(out, "no_new_privs 1 <nil>") {
		t.Fatalf("no_new_privs: %s", out)
	}
}

func TestSeccompRefusesNamespacesAndPtrace(t *testing.T) {
	s := box(t)
	need(t, s, sandbox.LayerSeccomp)
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("no unshare program to try with")
	}
	f := newFixture(t)
	out, _ := f.sh(t, s, `unshare -U true; echo "unshare=$?"`)
	if !strings.Contains(out, "unshare=1") || !strings.Contains(out, "Operation not permitted") {
		t.Fatalf("unshare in the sandbox: %s", out)
	}
	// The namespaces the helper's threads enter per command are refused
	// to the command too (it has no capability), alone or with a user
	// namespace.
	for _, flags := range []string{"-p -f", "-i", "-u", "-n", "-U -p -f"} {
		out, _ := f.sh(t, s, `unshare `+flags+` true; echo "unshare=$?"`)
		if !strings.Contains(out, "unshare=1") || !strings.Contains(out, "Operation not permitted") {
			t.Fatalf("unshare %s in the sandbox: %s", flags, out)
		}
	}
}

func TestDescendantsDieWithTheCommand(t *testing.T) {
	s := box(t)
	need(t, s, sandbox.LayerPIDNS)
	f := newFixture(t)
	marker := "300." + strconv.Itoa(os.Getpid())
	out, code := f.sh(t, s, `setsid sleep `+marker+` </dev/null >/dev/null 2>&1 & disown; (sleep `+marker+` &) ; echo started`)
	if code != 0 || out != "started\n" {
		t.Fatalf("%d %s", code, out)
	}
	if pids := findCmdline(marker); len(pids) > 0 {
		for _, p := range pids {
			unix.Kill(p, unix.SIGKILL)
		}
		t.Fatalf("processes survived the command: %v", pids)
	}
}

func findCmdline(marker string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if bytes.Contains(b, []byte(marker)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func TestProcessLimit(t *testing.T) {
	s := box(t)
	need(t, s, sandbox.LayerProcesses)
	f := newFixture(t)
	f.policy.Limits.Processes = 16
	self := testutil.SandboxExecutable(t)
	f.policy.ReadPaths = []string{filepath.Dir(self)}
	// Through the shell's ulimit, as commands are started: RLIMIT_NPROC
	// is the limit when the server is not root.
	argv := sandbox.WrapArgv([]string{self}, f.policy.Limits)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = []string{"SANDBOX_TEST_HELPER=spawn"}
	out, _ := f.run(t, s, cmd)
	if !strings.Contains(out, "resource temporarily unavailable") {
		t.Fatalf("40 processes under a limit of 16:\n%s", out)
	}
}

func TestMemoryAndFileSizeLimits(t *testing.T) {
	s := box(t)
	f := newFixture(t)
	f.policy.Limits.Memory = 64 << 20
	f.policy.Limits.FileSize = 1 << 20
	out, _ := f.sh(t, s, `x=$(head -c 200000000 /dev/zero | tr '\0' a); echo "len=${#x}"`)
	if strings.Contains(out, "len=200000000") {
		t.Fatalf("allocated 200 MB under a 64 MiB limit: %s", out)
	}
	out, _ = f.sh(t, s, `head -c 2000000 /dev/zero > big; echo "write=$?"; stat -c %s big`)
	if !strings.Contains(out, "write=153") || !strings.Contains(out, "1048576") {
		t.Fatalf("2 MB file under a 1 MiB limit: %s", out)
	}
}

func TestCPULimit(t *testing.T) {
	s := box(t)
	f := newFixture(t)
	f.policy.Limits.CPU = time.Second
	out, code := f.sh(t, s, `while :; do :; done`)
	if code != -int(unix.SIGXCPU) && code != -int(unix.SIGKILL) {
		t.Fatalf("busy loop under a 1 s CPU limit: exit %d %s", code, out)
	}
}

func TestOffRunsUnconfined(t *testing.T) {
	s, err := sandbox.New(sandbox.ModeOff)
	if err != nil {
		t.Fatal(err)
	}
	if s.On() || s.Status().String() != "sandbox off: commands run with the server's own authority" {
		t.Fatalf("off: %s", s.Status())
	}
	f := newFixture(t)
	outside := realDir(t)
	if out, code := f.sh(t, s, "echo x > "+outside+"/f && echo ok"); code != 0 || out != "ok\n" {
		t.Fatalf("off: %d %s", code, out)
	}
}

// BenchmarkStart is /bin/true started plainly and in the sandbox: with
// the workspace where the commands' uid can walk to it (no view), under a
// private 0700 parent (a root server attaches it in the command's view),
// and as a session's workspace beneath the sessions' root (hidden from
// the command), in a searchable and in a private parent. Budget
// (BENCHMARKS.md): a view costs one mount namespace per command, as a
// session's command always paid: the private layouts within 1.25× of the
// searchable session's start, same run.
func BenchmarkStart(b *testing.B) {
	s, err := sandbox.New(sandbox.ModeAuto)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	open := testutil.ReachableBySandbox(b, testutil.SandboxDir(b))
	private := testutil.SandboxDir(b) // t.TempDir's parent is 0700
	sessionIn := func(parent string) (sessions, session string) {
		sessions = filepath.Join(parent, "ws.sessions")
		session = filepath.Join(sessions, "s1", "workspace")
		if err := os.MkdirAll(session, 0o755); err != nil {
			b.Fatal(err)
		}
		if err := s.Own(session); err != nil {
			b.Fatal(err)
		}
		return sessions, session
	}
	openSessions, openSession := sessionIn(testutil.ReachableBySandbox(b, b.TempDir()))
	sessions, session := sessionIn(b.TempDir())
	for _, c := range []struct {
		name   string
		policy *sandbox.Policy
	}{
		{"plain", nil},
		{"sandboxed", &sandbox.Policy{Workspace: open, TempDir: open}},
		{"sandboxed-session", &sandbox.Policy{Workspace: openSession, TempDir: open, Private: []string{openSessions}}},
		{"sandboxed-private-parent", &sandbox.Policy{Workspace: private, TempDir: private}},
		{"sandboxed-session-private-parent", &sandbox.Policy{Workspace: session, TempDir: private, Private: []string{sessions}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				cmd := exec.Command("/bin/true")
				var err error
				if c.policy != nil {
					var p *sandbox.Process
					if p, err = s.Start(cmd, c.policy); err == nil {
						err = p.Wait()
					}
				} else {
					err = cmd.Run()
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
