package builtin_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every tool that takes a path refuses one that leaves the workspace: "..",
// an absolute path outside, a symlink to "/" (followed or as the path
// itself), and a dangling symlink that points out, and nothing outside is
// read, written or created.
func TestPathEscapesRefusedByEveryFileTool(t *testing.T) {
	k := newKit(t)
	out := outside(t)
	k.write("inside.txt", "inside\n")
	must(t, os.Symlink("/", filepath.Join(k.dir, "root")))
	must(t, os.Symlink(out, filepath.Join(k.dir, "out")))
	must(t, os.Symlink(filepath.Join(out, "created.txt"), filepath.Join(k.dir, "dangling")))

	escapes := []string{
		"../x",
		"../../etc/passwd",
		"/etc/passwd",
		"root",
		"root/etc/passwd",
		"out/secret.txt",
		"sub/../../x",
		"dangling",
		filepath.Join(out, "secret.txt"),
	}
	// Each tool with the path argument put where it takes one.
	calls := map[string]func(p string) map[string]any{
		"read":  func(p string) map[string]any { return map[string]any{"path": p} },
		"write": func(p string) map[string]any { return map[string]any{"path": p, "content": "pwned"} },
		"edit": func(p string) map[string]any {
			return map[string]any{"path": p, "oldString": "hello", "newString": "pwned"}
		},
		"grep": func(p string) map[string]any { return map[string]any{"pattern": "hello", "path": p} },
		"glob": func(p string) map[string]any { return map[string]any{"pattern": "*", "path": p} },
		"bash": func(p string) map[string]any { return map[string]any{"command": "pwd", "workdir": p} },
		"apply_patch": func(p string) map[string]any {
			return map[string]any{"patchText": "*** Begin Patch\n*** Add File: " + p + "\n+pwned\n*** End Patch"}
		},
	}
	for name, args := range calls {
		for _, p := range escapes {
			t.Run(name+" "+p, func(t *testing.T) {
				res := k.run(name, args(p))
				want := name + ": path escapes the workspace: " + p
				if res.Output != want || !res.IsError {
					t.Errorf("output = %q (isError %v), want %q", res.Output, res.IsError, want)
				}
			})
		}
	}
	if got := readFile(t, filepath.Join(out, "secret.txt")); got != "hello secret\n" {
		t.Errorf("outside file changed: %q", got)
	}
	if _, err := os.Lstat(filepath.Join(out, "created.txt")); !os.IsNotExist(err) {
		t.Errorf("a file was created outside through the dangling link: %v", err)
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 1 {
		t.Errorf("outside dir has %d entries, want 1", len(entries))
	}
}

// Symlinks that stay inside, and absolute paths inside, are fine.
func TestInsidePathsAllowed(t *testing.T) {
	k := newKit(t)
	k.write("real/f.txt", "hello\n")
	must(t, os.Symlink("real", filepath.Join(k.dir, "alias")))
	must(t, os.Symlink(filepath.Join(k.dir, "real", "new.txt"), filepath.Join(k.dir, "pending")))
	for _, p := range []string{"alias/f.txt", filepath.Join(k.dir, "real/f.txt"), "./real/../real/f.txt"} {
		res := k.run("read", map[string]any{"path": p})
		if res.IsError || res.Output != "hello\n" {
			t.Errorf("read %s = %+v", p, res)
		}
	}
	// Writing through a dangling link that points inside lands inside.
	res := k.run("write", map[string]any{"path": "pending", "content": "via link"})
	if res.IsError {
		t.Fatalf("write via inside link: %s", res.Output)
	}
	if got := k.read("real/new.txt"); got != "via link" {
		t.Errorf("real/new.txt = %q", got)
	}
	res = k.run("bash", map[string]any{"command": "pwd", "workdir": "alias"})
	if res.IsError || strings.TrimSpace(res.Output) != filepath.Join(k.dir, "real") {
		t.Errorf("bash in alias = %+v", res)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
