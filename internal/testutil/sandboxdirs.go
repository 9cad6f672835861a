package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

// sandboxID is the host uid and gid a root server's sandboxed commands act
// as (sandbox.DefaultCommandID; not imported, so packages the sandbox
// imports can use this file too).
const sandboxID = 65534

// ReachableBySandbox lets a non-root server that a root test starts (as
// TestSandboxAttacksWithANonRootServer does) reach path: such a server,
// and its commands, act as the server's own uid, so every directory above
// path needs its search bit for others (t.TempDir's parent and go test's
// build directory are 0700). It adds that bit and nothing else; as
// non-root it does nothing. A root server needs none of this: its
// commands reach the directories they need beneath any parent through
// their view (internal/sandbox, view.go). It returns path.
func ReachableBySandbox(t testing.TB, path string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		return path
	}
	for d := filepath.Dir(path); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o001 == 0 {
			if err := os.Chmod(d, fi.Mode().Perm()|0o001); err != nil {
				t.Fatal(err)
			}
		}
		if d == "/" || d == "." {
			return path
		}
	}
}

// SandboxDir is a new temporary directory (symlinks resolved) a sandboxed
// command can use as its workspace or temp dir: when the tests run as
// root, owned by the sandbox's uid and gid as the server's own directories
// for commands are. Its parent stays private (0700), as /root and any
// `mktemp -d` are: the sandbox must reach it all the same.
func SandboxDir(t testing.TB) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := os.Chown(d, sandboxID, sandboxID); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// SandboxExecutable is this test binary's path, for tests that run it in
// the sandbox (with its directory among the read paths). It lies in go
// test's private (0700) build directory, which the sandbox reaches.
func SandboxExecutable(t testing.TB) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return self
}

// SandboxIDs are the host ids a root server's sandboxed commands act as,
// or -1 when the tests do not run as root (the commands are the test's
// uid).
func SandboxIDs() (uid, gid int) {
	if os.Geteuid() != 0 {
		return -1, -1
	}
	return sandboxID, sandboxID
}
