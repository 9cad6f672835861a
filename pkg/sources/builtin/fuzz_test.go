package builtin_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/sources/builtin"
)

// FuzzParsePatch: the parser never panics, and what it accepts is well
// formed: at least one operation, each with a known kind and a path.
// Seeds live in testdata/fuzz/FuzzParsePatch.
func FuzzParsePatch(f *testing.F) {
	f.Add("*** Begin Patch\n*** Add File: a.txt\n+hello\n*** End Patch")
	f.Add("*** Begin Patch\n*** Update File: a.txt\n@@\n a\n-b\n+c\n*** End of File\n*** Delete File: b\n*** End Patch\n")
	f.Add("*** Begin Patch\n*** End Patch")
	f.Fuzz(func(t *testing.T, text string) {
		ops, err := builtin.ParsePatch(text)
		if err != nil {
			if ops != nil {
				t.Fatalf("ops %v returned with error %v", ops, err)
			}
			return
		}
		if len(ops) == 0 {
			t.Fatal("accepted a patch with no operations")
		}
		for _, op := range ops {
			switch op.Kind {
			case builtin.OpAdd, builtin.OpUpdate, builtin.OpDelete:
			default:
				t.Fatalf("unknown kind %q", op.Kind)
			}
			if strings.TrimSpace(op.Path) == "" || op.Path != strings.TrimSpace(op.Path) {
				t.Fatalf("bad path %q", op.Path)
			}
			if op.Kind != builtin.OpUpdate && len(op.Hunks) > 0 {
				t.Fatalf("%s with hunks", op.Kind)
			}
		}
	})
}

// FuzzResolvePath: whatever the path, a resolved path is inside the root,
// and so is what the kernel makes of it (checked with EvalSymlinks when it
// exists). The workspace holds links to "/", to its parent, to itself and
// a dangling one pointing out. Seeds live in testdata/fuzz/FuzzResolvePath.
func FuzzResolvePath(f *testing.F) {
	root, err := filepath.EvalSymlinks(f.TempDir())
	if err != nil {
		f.Fatal(err)
	}
	for _, d := range []string{"a/b", "c"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			f.Fatal(err)
		}
	}
	links := map[string]string{
		"up":       "..",
		"slash":    "/",
		"self":     ".",
		"a/b/back": "../..",
		"loop":     "loop",
		"dangling": "/nonexistent-toolnexus/x",
		"c/in":     "../a",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			f.Fatal(err)
		}
	}
	ws, err := builtin.NewWorkspace(root)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"", ".", "a/b", "../x", "/etc/passwd", "up/x", "slash/etc", "a/b/back/back", "c/in/b/../../..", "loop/x", "dangling", root + "/a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		real, err := ws.Resolve(p)
		if err != nil {
			return
		}
		inside := func(x string) bool { return x == root || strings.HasPrefix(x, root+"/") }
		if !inside(real) {
			t.Fatalf("Resolve(%q) = %q, outside %q", p, real, root)
		}
		if k, err := filepath.EvalSymlinks(real); err == nil && !inside(k) {
			t.Fatalf("Resolve(%q) = %q, which the kernel resolves to %q, outside %q", p, real, k, root)
		}
	})
}
