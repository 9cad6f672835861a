package builtin_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/sources/builtin"
)

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
