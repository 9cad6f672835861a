package server_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/sandbox"
	"github.com/toolnexus/toolnexus/pkg/server"
)

// TestRootServerInAPrivateDirectory is the README's tour as root from a
// clone under /root (0700): the workspace and the sessions' root lie below
// a directory the commands' uid (65534) may not search. write, bash, a
// session's bash, apply_patch and grep all work over gRPC, the directory
// keeps its mode, the start logs no warning about it, and the sandbox's
// guarantees hold in that layout: a 0600 root file stays unreadable,
// setuid, chmod and chown of a root file are refused, another session is
// unseen. (Every test of this package now runs its server in such a
// layout: launch's directory is a private t.TempDir.)
func TestRootServerInAPrivateDirectory(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("only a root server's commands act as another uid; CI runs as root")
	}
	s := serve(t, `{"skills": [], "builtins": {"tools": {"webfetch": false}}}`, nil)
	ws := filepath.Join(filepath.Dir(s.cfgPath), "ws")
	private := privateAncestor(t, ws)
	before, err := os.Stat(private)
	if err != nil {
		t.Fatal(err)
	}
	reg := pb.NewRegistryServiceClient(s.dial(t))
	ctx := context.Background()
	src, err := pb.NewSourceServiceClient(s.dial(t)).ListSources(ctx, &pb.ListSourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range src.GetSandbox().GetLayers() {
		if (l.GetName() == sandbox.LayerUserNS || l.GetName() == sandbox.LayerLandlock) && !l.GetActive() {
			t.Skipf("sandbox layer %s is missing here: %s", l.GetName(), l.GetDetail())
		}
	}
	run := func(ctx context.Context, tool string, args map[string]any) string {
		t.Helper()
		r := execIn(t, ctx, reg, tool, args)
		if r.GetIsError() {
			t.Fatalf("%s %v: %s", tool, args, r.GetOutput())
		}
		return r.GetOutput()
	}

	run(ctx, "write", map[string]any{"path": "hello.txt", "content": "hi\n"})
	if out := run(ctx, "bash", map[string]any{"command": "cat hello.txt; ls"}); out != "hi\nhello.txt\n" {
		t.Errorf("bash cat: %q", out)
	}
	run(ctx, "apply_patch", map[string]any{"patchText": "*** Begin Patch\n*** Add File: patched.txt\n+needle in the patch\n*** End Patch"})
	if out := run(ctx, "bash", map[string]any{"command": "cat patched.txt && echo && echo more >> patched.txt"}); !strings.HasPrefix(out, "needle in the patch") {
		t.Errorf("bash after apply_patch: %q", out)
	}
	if out := run(ctx, "grep", map[string]any{"pattern": "needle"}); !strings.Contains(out, "patched.txt") {
		t.Errorf("grep: %q", out)
	}

	one, two := inSession("", "one"), inSession("", "two")
	run(one, "write", map[string]any{"path": "mine.txt", "content": "session one\n"})
	if out := run(one, "bash", map[string]any{"command": "cat mine.txt; pwd"}); !strings.HasPrefix(out, "session one\n"+ws+".sessions/") {
		t.Errorf("a session's bash: %q", out)
	}
	oneDir := strings.TrimSpace(run(one, "bash", map[string]any{"command": "pwd"}))
	run(two, "write", map[string]any{"path": "x", "content": "x"})
	if out := run(two, "bash", map[string]any{"command": "stat " + oneDir + " 2>&1; cat " + oneDir + "/mine.txt 2>&1; true"}); strings.Contains(out, "session one") ||
		strings.Count(out, "No such file") != 2 {
		t.Errorf("another session's bash reaches session one: %q", out)
	}

	// Root's files in the workspace, written there directly as root.
	for name, mode := range map[string]os.FileMode{"root-secret": 0o600, "root-prog": 0o755} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte("root-only-5e2a\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	prog := snapshot(t, filepath.Join(ws, "root-prog"))
	out := run(ctx, "bash", map[string]any{"command": `id -u; cat root-secret; echo cat=$?; chmod 4755 root-prog; echo setuid=$?
chmod 777 root-prog; echo chmod=$?; chown 65534 root-prog; echo chown=$?; true`})
	for _, want := range []string{"65534\n", "cat=1", "setuid=1", "chmod=1", "chown=1"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in the attack's output:\n%s", want, out)
		}
	}
	if strings.Contains(out, "root-only-5e2a") {
		t.Error("a command read a 0600 root file")
	}
	prog.unchanged(t)

	if after, err := os.Stat(private); err != nil || after.Mode() != before.Mode() {
		t.Errorf("%s changed mode: %v → %v (%v)", private, before.Mode(), after.Mode(), err)
	}
	if logs := s.logs.String(); strings.Contains(logs, "cannot search") {
		t.Errorf("the start warned about a directory the commands reach:\n%s", logs)
	}
}

// privateAncestor is the nearest directory above path that uid 65534 may
// not search (0700, root's): the premise of the tests in this layout.
func privateAncestor(t *testing.T, path string) string {
	t.Helper()
	for d := filepath.Dir(path); d != "/"; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o001 == 0 {
			return d
		}
	}
	t.Fatalf("no directory above %s is private; the test's layout is not what it checks", path)
	return ""
}

// TestStartAndCheckNameADirectoryTheCommandsCannotReach plays a root
// server that cannot give its commands a view (a container without
// CAP_SYS_ADMIN) with its workspace under a 0700 directory: --check and
// the start each say so once, naming the key, the directory in the way
// and the fix, before any call; with the view the same layout draws no
// warning.
func TestStartAndCheckNameADirectoryTheCommandsCannotReach(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only a root server's commands act as another uid")
	}
	dir := t.TempDir()
	private := privateAncestor(t, filepath.Join(dir, "ws"))
	cfg := filepath.Join(dir, "toolnexus.json")
	if err := os.WriteFile(cfg, []byte(`{"skills": []}`), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := server.Options{ConfigPath: cfg, Listen: "127.0.0.1:0", MetricsListen: "-", Workspace: filepath.Join(dir, "ws")}
	if warnings, err := server.Check(opts); err != nil || len(warnings) != 0 {
		t.Fatalf("--check with the view: %v %q", err, warnings)
	}

	restore := sandbox.DisableForTest(sandbox.MountView)
	defer restore()
	warnings, err := server.Check(opts)
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(warnings, "\n")
	for _, key := range []string{"sandbox: builtins.workspace: ", "sandbox: sessions.root: "} {
		if !strings.Contains(joined, key) {
			t.Errorf("--check does not name %s: %q", key, joined)
		}
	}
	for _, want := range []string{"cannot search " + private + " (mode 0700, owner uid 0)", "Fix: "} {
		if !strings.Contains(joined, want) {
			t.Errorf("--check does not say %q: %q", want, joined)
		}
	}
	logs := &logBuffer{}
	opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
	srv, err := server.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())
	if n := strings.Count(logs.String(), "sandbox: builtins.workspace: "); n != 1 {
		t.Errorf("the start logs the workspace's problem %d times; want once:\n%s", n, logs)
	}
}
