package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/internal/sandbox"
)

// TestRootServerPrivateParent is a root server whose workspace, temp dir,
// read path and sessions all lie under a 0700 root directory (as under
// /root or in any `mktemp -d`), which the commands' uid may not search.
// The commands still reach them at their own paths, the parent keeps its
// mode, and what the sandbox guarantees holds there: another session's
// directory is unseen, a 0600 root file unreadable, the read path
// read-only, setuid, chmod and chown of a root file refused.
func TestRootServerPrivateParent(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("a non-root server's commands act as its own uid, which walks its own paths")
	}
	s := box(t)
	need(t, s, sandbox.LayerUserNS, sandbox.LayerPIDNS, sandbox.LayerLandlock)
	parent, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(parent, 0o700); err != nil {
		t.Fatal(err)
	}
	mk := func(rel string, owned bool) string {
		d := filepath.Join(parent, rel)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if owned {
			if err := os.Chown(d, sandbox.DefaultCommandID, sandbox.DefaultCommandID); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	write := func(path, content string, mode os.FileMode) {
		if err := os.WriteFile(path, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	sessions := mk("tn/workspace.sessions", false)
	ws := mk("tn/workspace.sessions/s1/workspace", true)
	other := mk("tn/workspace.sessions/s2/workspace", true)
	write(filepath.Join(other, "theirs.txt"), "other session\n", 0o644)
	tmp := mk("tmp", true)
	ro := mk("tn/tools", false)
	write(filepath.Join(ro, "tool.txt"), "a read path\n", 0o644)
	write(filepath.Join(ws, "hello.txt"), "hi\n", 0o644)
	write(filepath.Join(parent, "hidden.txt"), "beside the workspace\n", 0o644)
	write(filepath.Join(ws, "root-secret"), "root only\n", 0o600)
	write(filepath.Join(ws, "root-prog"), "#!/bin/sh\n", 0o755)

	f := &fixture{ws: ws, tmp: tmp, policy: sandbox.Policy{Workspace: ws, TempDir: tmp,
		ReadPaths: []string{ro}, Private: []string{sessions}, Limits: sandbox.DefaultLimits}}
	t.Run("through the helper", func(t *testing.T) {
		privateParentAttacks(t, s, f, parent, sessions, other, ro)
	})
	// Without user namespaces there is no helper: the server starts the
	// command from a thread of its own, in a mount namespace it makes as
	// root, and the command acts as the unprivileged uid by setuid.
	t.Run("without user namespaces", func(t *testing.T) {
		restore := sandbox.DisableForTest(sandbox.LayerUserNS)
		direct, err := sandbox.New(sandbox.ModeAuto)
		restore()
		if err != nil {
			t.Fatal(err)
		}
		defer direct.Close()
		privateParentAttacks(t, direct, f, parent, sessions, other, ro)
		if err := direct.Unreachable(ws); err != nil {
			t.Fatalf("Unreachable(%s) = %v; the server's own mount namespace reaches it", ws, err)
		}
	})
	if fi, err := os.Stat(parent); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the parent's mode changed: %v %v", fi.Mode(), err)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "made.txt")); err != nil || string(b) != "new\n" {
		t.Fatalf("the command's file on the host: %q %v", b, err)
	}
	if err := s.Unreachable(ws); err != nil {
		t.Fatalf("Unreachable(%s) = %v; the view reaches it", ws, err)
	}
}

// privateParentAttacks runs what TestRootServerPrivateParent checks, one
// way of starting the command.
func privateParentAttacks(t *testing.T, s *sandbox.Sandbox, f *fixture, parent, sessions, other, ro string) {
	ws := f.ws
	for _, c := range []struct {
		name, script string
		wantCode     int
		want         string
	}{
		{"cat in the workspace", "cat hello.txt && pwd", 0, "hi\n" + ws + "\n"},
		{"write in the workspace", "echo new > made.txt && cat made.txt", 0, "new\n"},
		{"write in the temp dir", "echo t > \"$TMPDIR/x\" && cat \"$TMPDIR/x\"", 0, "t\n"},
		{"read the read path", "cat " + filepath.Join(ro, "tool.txt"), 0, "a read path\n"},
		{"write the read path", "echo x > " + filepath.Join(ro, "w.txt"), 1, "Permission denied"},
		{"another session unseen", "ls -a " + sessions + "; cat " + filepath.Join(other, "theirs.txt"), 1, "No such file"},
		{"another session's directory cannot be stat-ed", "stat " + other, 1, "No such file"},
		{"the rest of the parent stays hidden", "stat " + filepath.Join(parent, "hidden.txt"), 1, "No such file"},
		{"a 0600 root file", "cat root-secret", 1, "Permission denied"},
		{"setuid on a root file", "chmod 4755 root-prog", 1, "Operation not permitted"},
		{"chmod of a root file", "chmod 777 root-prog", 1, "Operation not permitted"},
		{"chown to the command's uid", "chown 65534 root-prog", 1, "Operation not permitted"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, code := f.sh(t, s, c.script)
			if code != c.wantCode || !strings.Contains(out, c.want) {
				t.Fatalf("%s: exit %d %q; want exit %d with %q", c.script, code, out, c.wantCode, c.want)
			}
		})
	}
}

// TestUnreachableNamesTheDirectoryAndTheFix: a root server that cannot
// mount a view says, for a workspace under a 0700 parent, which directory
// is in the way and how to fix it; a reachable one passes.
func TestUnreachableNamesTheDirectoryAndTheFix(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only a root server's commands act as another uid")
	}
	restore := sandbox.DisableForTest(sandbox.MountView)
	s, err := sandbox.New(sandbox.ModeAuto)
	restore()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	parent, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(parent, "tn", "workspace") // not made yet: the server makes it
	err = s.Unreachable(ws)
	if err == nil {
		t.Fatal("Unreachable: nil for a workspace under a 0700 parent")
	}
	for _, want := range []string{ws, "cannot search " + filepath.Dir(parent) + " (mode 0700, owner uid 0)", "uid 65534", "Fix:", "turned off by a test"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Unreachable = %q; want it to say %q", err, want)
		}
	}
	if err := s.Unreachable(os.TempDir()); err != nil {
		t.Errorf("Unreachable of a searchable directory: %v", err)
	}
}
