package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/confine"
	"github.com/toolnexus/toolnexus/internal/sandbox"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/field"
	"github.com/toolnexus/toolnexus/pkg/sources/mcp"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// sandboxBox is the kernel's sandbox in auto mode; the test skips where
// Landlock is missing (nothing would be confined to attack).
func sandboxBox(t testing.TB) *sandbox.Sandbox {
	t.Helper()
	box, err := sandbox.New(sandbox.ModeAuto)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(box.Close)
	if !box.Status().Active(sandbox.LayerLandlock) {
		t.Skipf("no landlock here (%s): a sandboxed server is not confined, the attacks are not run", box.Status())
	}
	return box
}

// sandboxFixture is a directory laid out like a deployment: the server's
// binary under bin/ (a copy, so its processes can be found by path), a
// config file with a secret under conf/ (masked, as the engine masks the
// config's directory), and the rest readable but not writable.
type sandboxFixture struct {
	dir, bin, secretFile string
	env                  sources.Env
	listener             net.Listener
}

const sandboxSecret = "tok-4f1c2a-do-not-leak"

func newSandboxFixture(t testing.TB) *sandboxFixture {
	t.Helper()
	box := sandboxBox(t)
	dir := t.TempDir()
	f := &sandboxFixture{dir: dir, bin: filepath.Join(dir, "bin", "mcptestserver"), secretFile: filepath.Join(dir, "conf", "toolnexus.json")}
	for _, d := range []string{"bin", "conf"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(serverBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.secretFile, []byte(`{"auth": {"tokens": [{"token": "`+sandboxSecret+`"}]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	f.env = sources.Env{Logger: slog.New(slog.DiscardHandler), Sandbox: &sandbox.Runner{Box: box, Policy: sandbox.Policy{
		Masks:  []string{"/run", "/root", filepath.Dir(f.secretFile)},
		Limits: sandbox.DefaultLimits,
	}}}
	// A loopback listener standing in for the server's own ports.
	f.listener, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.listener.Close() })
	go func() {
		for {
			c, err := f.listener.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return f
}

func (f *sandboxFixture) config(sb *mcp.Sandbox) mcp.ServerConfig {
	cfg := localConfig("-attack")
	cfg.Command[0] = f.bin
	cfg.Sandbox = sb
	return cfg
}

// processesOf lists the processes with a path below dir on their command
// line (the program, or the script an interpreter runs).
func processesOf(dir string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if strings.Contains(string(cmdline), dir+string(filepath.Separator)) {
			out = append(out, e.Name()+" "+strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
	return out
}

// ownProcessesOf is processesOf narrowed to this test binary's descendants:
// other packages' tests run node scripts from the same directory at the
// same time, and their processes are not this test's to account for.
func ownProcessesOf(dir string) []string {
	var out []string
	for _, p := range processesOf(dir) {
		pid, _, _ := strings.Cut(p, " ")
		if descendsFromUs(pid) {
			out = append(out, p)
		}
	}
	return out
}

// descendsFromUs walks pid's parent chain up to this process or init.
func descendsFromUs(pid string) bool {
	self := strconv.Itoa(os.Getpid())
	for i := 0; i < 64 && pid != "" && pid != "0" && pid != "1"; i++ {
		if pid == self {
			return true
		}
		stat, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
		if err != nil {
			return false
		}
		// The command name in parentheses may hold spaces: the fields
		// after its closing parenthesis are "state ppid ...".
		rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
		fields := strings.Fields(rest)
		if len(fields) < 2 {
			return false
		}
		pid = fields[1]
	}
	return false
}

// stillRunning reports which of the listed processes ("PID cmdline")
// still exist with the same command line.
func stillRunning(procs []string) []string {
	var out []string
	for _, p := range procs {
		pid, cmd, _ := strings.Cut(p, " ")
		cmdline, err := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
		if err == nil && strings.ReplaceAll(string(cmdline), "\x00", " ") == cmd {
			out = append(out, p)
		}
	}
	return out
}

// A stdio server with "sandbox" runs in the command sandbox: its tools
// list and answer as before, and what it may not reach it cannot — the
// server's config file (masked below a readable path), the server's
// /proc/PID/environ, a loopback listener, a file outside its directories.
// The same server without the sandbox reaches every one of them. Close
// leaves no process behind, a grandchild included.
func TestSandboxedServerAttacks(t *testing.T) {
	f := newSandboxFixture(t)
	// The server's own read path is the fixture: its binary is there.
	boxed := f.config(&mcp.Sandbox{ReadPaths: []string{f.dir}})
	reg, src := startEnv(t, "boxed", boxed, f.env)
	plainReg, plainSrc := startEnv(t, "plain", f.config(nil), f.env)

	if st := src.Status(); !strings.Contains(st.Sandbox, "sandboxed") || !strings.Contains(st.Sandbox, "network off") {
		t.Errorf("sandboxed server's status: %+v", st)
	}
	if st := plainSrc.Status(); st.Sandbox != "" {
		t.Errorf("plain server's status says %q", st.Sandbox)
	}
	if r := call(t, reg, "boxed_echo", `{"text":"through the pipes"}`); r.IsError || r.Output != "through the pipes" {
		t.Fatalf("echo in the sandbox: %+v", r)
	}
	home := call(t, reg, "boxed_where", `{"name":"HOME"}`)
	if home.IsError || len(strings.Split(home.Output, "\n")) < 2 {
		t.Fatalf("where: %+v", home)
	}
	homeDir := strings.TrimSpace(strings.Split(home.Output, "\n")[1])
	if homeDir == "" || !strings.Contains(homeDir, "toolnexus-mcp-") {
		t.Fatalf("HOME of a sandboxed server = %q; want its private temp dir", homeDir)
	}
	if r := call(t, reg, "boxed_write_file", `{"path":`+strconv.Quote(filepath.Join(homeDir, "ok.txt"))+`,"content":"mine"}`); r.IsError {
		t.Fatalf("a sandboxed server cannot write its own temp dir: %+v", r)
	}

	outside := filepath.Join(f.dir, "outside.txt")
	attacks := []struct {
		name, tool, args string
		refused          []string // the errno texts the kernel may answer with
		leak             string   // what must not appear in the sandboxed output
	}{
		{"the config file", "read_file", `{"path":` + strconv.Quote(f.secretFile) + `}`, []string{"permission denied"}, sandboxSecret},
		{"the server's environ", "read_file", `{"path":"/proc/` + strconv.Itoa(os.Getpid()) + `/environ"}`,
			[]string{"permission denied", "no such file"}, "PATH="},
		{"a loopback listener", "dial", `{"addr":"` + f.listener.Addr().String() + `"}`,
			[]string{"permission denied", "operation not permitted", "network is unreachable"}, "connected"},
		{"a file outside its dirs", "write_file", `{"path":` + strconv.Quote(outside) + `,"content":"planted"}`,
			[]string{"permission denied", "read-only file system"}, "written"},
	}
	for _, a := range attacks {
		r := call(t, reg, "boxed_"+a.tool, a.args)
		t.Logf("sandboxed, %s: %s", a.name, r.Output)
		lower := strings.ToLower(r.Output)
		ok := false
		for _, want := range a.refused {
			ok = ok || strings.Contains(lower, want)
		}
		if !r.IsError || !ok || strings.Contains(r.Output, a.leak) {
			t.Errorf("sandboxed server reaching %s: is_error=%v %q; want refused with one of %q", a.name, r.IsError, r.Output, a.refused)
		}
		if p := call(t, plainReg, "plain_"+a.tool, a.args); p.IsError {
			t.Errorf("unsandboxed server reaching %s: %q; the attack must work without the sandbox", a.name, p.Output)
		}
	}
	if err := os.Remove(outside); err != nil {
		t.Errorf("the unsandboxed server's write: %v", err)
	}

	// A grandchild, then Close: nothing of the server remains.
	if r := call(t, reg, "boxed_spawn", `{}`); r.IsError {
		t.Fatalf("spawn: %+v", r)
	}
	if len(processesOf(filepath.Dir(f.bin))) < 3 {
		t.Fatalf("want the two servers and the grandchild running: %q", processesOf(filepath.Dir(f.bin)))
	}
	_ = src.Close(context.Background())
	_ = plainSrc.Close(context.Background())
	if left := processesOf(filepath.Dir(f.bin)); len(left) > 0 {
		t.Fatalf("processes left after Close: %q", left)
	}
	if _, err := os.Stat(homeDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the sandboxed server's temp dir outlives Close: %v", err)
	}
}

// writePaths opens exactly the listed directories for writing: a file in
// one is written, one beside it is refused.
func TestSandboxedServerWritePaths(t *testing.T) {
	f := newSandboxFixture(t)
	state := filepath.Join(f.dir, "state")
	if err := os.Mkdir(state, 0o755); err != nil {
		t.Fatal(err)
	}
	// As an operator does for a root server: the writePath belongs to
	// the uid sandboxed commands act as (README, The sandbox).
	if uid, gid, ok := f.env.Sandbox.(*sandbox.Runner).Owner(); ok {
		if err := os.Chown(state, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	reg, src := startEnv(t, "w", f.config(&mcp.Sandbox{ReadPaths: []string{f.dir}, WritePaths: []string{state}}), f.env)
	if st := src.Status(); !strings.Contains(st.Sandbox, "1 write path") {
		t.Errorf("status: %+v", st)
	}
	if r := call(t, reg, "w_write_file", `{"path":`+strconv.Quote(filepath.Join(state, "kept.txt"))+`,"content":"kept"}`); r.IsError {
		t.Fatalf("write in a writePath: %+v", r)
	}
	if got, err := os.ReadFile(filepath.Join(state, "kept.txt")); err != nil || string(got) != "kept" {
		t.Fatalf("kept.txt: %q %v", got, err)
	}
	if r := call(t, reg, "w_write_file", `{"path":`+strconv.Quote(filepath.Join(f.dir, "beside.txt"))+`,"content":"x"}`); !r.IsError || !strings.Contains(r.Output, "permission denied") {
		t.Fatalf("write beside the writePath: %+v", r)
	}
}

// "network": true in the server's sandbox entry lets it reach the network
// although sandbox.network is off.
func TestSandboxedServerNetworkOverride(t *testing.T) {
	f := newSandboxFixture(t)
	on := true
	reg, src := startEnv(t, "net", f.config(&mcp.Sandbox{Network: &on, ReadPaths: []string{f.dir}}), f.env)
	if st := src.Status(); !strings.Contains(st.Sandbox, "network on") {
		t.Errorf("status: %+v", st)
	}
	if r := call(t, reg, "net_dial", `{"addr":"`+f.listener.Addr().String()+`"}`); r.IsError || r.Output != "connected" {
		t.Fatalf("dial with the server's network on: %+v", r)
	}
	if r := call(t, reg, "net_read_file", `{"path":`+strconv.Quote(f.secretFile)+`}`); !r.IsError {
		t.Fatalf("the network override opened the filesystem: %+v", r)
	}
}

// A sandboxed server that dies is restarted in the sandbox, with a fresh
// temp dir; the old one is gone.
func TestSandboxedServerRestarts(t *testing.T) {
	f := newSandboxFixture(t)
	reg, _ := startEnv(t, "re", f.config(&mcp.Sandbox{ReadPaths: []string{f.dir}}), f.env)
	before := call(t, reg, "re_where", `{"name":"HOME"}`).Output
	for _, p := range processesOf(filepath.Dir(f.bin)) {
		pid, _ := strconv.Atoi(strings.Fields(p)[0])
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	deadline := time.Now().Add(waitTimeout)
	for {
		r := call(t, reg, "re_where", `{"name":"HOME"}`)
		if !r.IsError && r.Output != before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not restarted within %v: %+v", waitTimeout, r)
		}
		time.Sleep(20 * time.Millisecond)
	}
	oldHome := strings.TrimSpace(strings.Split(before, "\n")[1])
	if _, err := os.Stat(oldHome); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the dead server's temp dir is still there: %v", err)
	}
	if r := call(t, reg, "re_read_file", `{"path":`+strconv.Quote(f.secretFile)+`}`); !r.IsError {
		t.Fatalf("the restarted server is not confined: %+v", r)
	}
}

// With the sandbox off (or no sandbox at all) a server that asks for it
// runs unconfined, says so in the log, and its status claims nothing.
func TestSandboxedServerWithSandboxOff(t *testing.T) {
	off, err := sandbox.New(sandbox.ModeOff)
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuf{b: &strings.Builder{}}
	env := sources.Env{Logger: slog.New(slog.NewTextHandler(logs, nil)), Sandbox: &sandbox.Runner{Box: off}}
	cfg := localConfig()
	cfg.Sandbox = &mcp.Sandbox{}
	reg, src := startEnv(t, "off", cfg, env)
	if r := call(t, reg, "off_echo", `{"text":"hi"}`); r.IsError {
		t.Fatal(r.Output)
	}
	if st := src.Status(); st.Sandbox != "" {
		t.Errorf("status claims a sandbox: %q", st.Sandbox)
	}
	if !strings.Contains(logs.String(), "sandbox.mode is off") {
		t.Errorf("no warning in the log: %s", logs.String())
	}
}

func TestParseSandboxConfig(t *testing.T) {
	got, _, err := mcp.ParseConfig(json.RawMessage(`{
	  "a": {"command": "x", "sandbox": true},
	  "b": {"command": "x", "sandbox": false},
	  "c": {"command": "x", "sandbox": {"network": true, "readPaths": ["/opt/srv", "rel"], "writePaths": ["/var/lib/srv"]}},
	  "d": {"command": "x", "sandbox": {}}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	on := true
	for name, want := range map[string]*mcp.Sandbox{"a": {}, "b": nil, "c": {Network: &on, ReadPaths: []string{"/opt/srv", "rel"}, WritePaths: []string{"/var/lib/srv"}}, "d": {}} {
		g := got[name].Sandbox
		gj, _ := json.Marshal(g)
		wj, _ := json.Marshal(want)
		if (g == nil) != (want == nil) || string(gj) != string(wj) {
			t.Errorf("%s.sandbox = %s; want %s", name, gj, wj)
		}
	}
	for raw, key := range map[string]string{
		`{"s": {"command": "x", "sandbox": "yes"}}`:                       "s.sandbox",
		`{"s": {"command": "x", "sandbox": {"netwrok": true}}}`:           "s.sandbox.netwrok",
		`{"s": {"command": "x", "sandbox": {"network": "on"}}}`:           "s.sandbox.network",
		`{"s": {"command": "x", "sandbox": {"readPaths": "/opt"}}}`:       "s.sandbox.readPaths",
		`{"s": {"command": "x", "sandbox": {"readPaths": ["/opt", ""]}}}`: "s.sandbox.readPaths[1]",
		`{"s": {"command": "x", "sandbox": {"writePaths": [1]}}}`:         "s.sandbox.writePaths",
		`{"s": {"url": "https://example.test/mcp", "sandbox": true}}`:     "s.sandbox",
	} {
		_, _, err := mcp.ParseConfig(json.RawMessage(raw))
		var fe *field.Error
		if !errors.As(err, &fe) || fe.Key != key {
			t.Errorf("%s: %v; want an error naming %s", raw, err, key)
		}
	}
}

func startEnv(t testing.TB, name string, cfg mcp.ServerConfig, env sources.Env) (*registry.Registry, sources.Source) {
	t.Helper()
	reg := registry.New()
	src := mcp.New(name, cfg, env)
	t.Cleanup(func() { _ = src.Close(context.Background()) })
	if err := src.Start(t.Context(), reg); err != nil {
		t.Fatalf("Start %s: %v", name, err)
	}
	return reg, src
}

type lockedBuf struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// The sandbox's cost for a stdio server: per call (none expected: the
// same pipes) and per start (namespaces, rules, the /bin/sh that sets the
// limits), plain against sandboxed in one run:
//
//	go test -run '^$' -bench 'BenchmarkStdio' ./pkg/sources/mcp/
func BenchmarkStdioCall(b *testing.B) {
	f := newSandboxFixture(b)
	for _, c := range []struct {
		name string
		sb   *mcp.Sandbox
	}{{"plain", nil}, {"sandboxed", &mcp.Sandbox{ReadPaths: []string{f.dir}}}} {
		b.Run(c.name, func(b *testing.B) {
			reg, _ := startEnv(b, "b", f.config(c.sb), f.env)
			call := tool.Call{Arguments: json.RawMessage(`{"text":"ping"}`)}
			ctx := context.Background()
			measure(b, func() bool { return !testutil.Direct{Reg: reg}.Execute(ctx, "b_echo", call).IsError })
		})
	}
}

func BenchmarkStdioStart(b *testing.B) {
	f := newSandboxFixture(b)
	for _, c := range []struct {
		name string
		sb   *mcp.Sandbox
	}{{"plain", nil}, {"sandboxed", &mcp.Sandbox{ReadPaths: []string{f.dir}}}} {
		b.Run(c.name, func(b *testing.B) {
			cfg := f.config(c.sb)
			measure(b, func() bool {
				src := mcp.New("b", cfg, f.env)
				err := src.Start(context.Background(), registry.New())
				_ = src.Close(context.Background())
				return err == nil
			})
		})
	}
}

// pretend is a sandbox from outside the server that claims to confine.
type pretend struct{}

func (pretend) On() bool { return true }

// A server that asks for the sandbox, handed one that only claims to
// confine, fails to start instead of running unconfined.
func TestSandboxedServerWithForeignSandbox(t *testing.T) {
	t.Parallel()
	cfg := localConfig()
	cfg.Sandbox = &mcp.Sandbox{}
	src := mcp.New("foreign", cfg, sources.Env{Logger: slog.New(slog.DiscardHandler), Sandbox: pretend{}})
	t.Cleanup(func() { _ = src.Close(context.Background()) })
	if err := src.Start(t.Context(), registry.New()); err == nil || !strings.Contains(err.Error(), confine.ErrForeign.Error()) {
		t.Fatalf("Start: %v, want %v", err, confine.ErrForeign)
	}
	if st := src.Status(); st.State != sources.Failed {
		t.Errorf("state %s, want failed", st.State)
	}
}
