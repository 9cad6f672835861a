package builtin_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/sources/builtin"
)

func TestWorkspaceResolve(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	root := filepath.Join(base, "ws")
	must(t, os.MkdirAll(filepath.Join(root, "a/b"), 0o755))
	must(t, os.Symlink("a", filepath.Join(root, "alias")))
	must(t, os.Symlink("/", filepath.Join(root, "slash")))
	must(t, os.Symlink("loop", filepath.Join(root, "loop")))
	must(t, os.Symlink(base, filepath.Join(root, "parent")))
	// The workspace reached through a symlink: both spellings of the root
	// are accepted for absolute paths.
	must(t, os.Symlink(root, filepath.Join(base, "link-to-ws")))
	ws, err := builtin.NewWorkspace(filepath.Join(base, "link-to-ws"))
	must(t, err)
	if ws.Root() != root {
		t.Fatalf("Root() = %q, want %q", ws.Root(), root)
	}
	tests := []struct {
		path string
		want string // "" means ErrEscapes
	}{
		{"", root},
		{".", root},
		{"a/b", root + "/a/b"},
		{"a/b/../b/./", root + "/a/b"},
		{"alias/b", root + "/a/b"},
		{"alias/new/file.txt", root + "/a/new/file.txt"},
		{"missing/x/y", root + "/missing/x/y"},
		{root + "/a", root + "/a"},
		{base + "/link-to-ws/a", root + "/a"},
		{"..", ""},
		{"../ws/a", ""}, // leaves the root lexically, even if it comes back
		{"a/../../x", ""},
		{"/etc/passwd", ""},
		{"/", ""},
		{"slash", ""},
		{"slash/etc/passwd", ""},
		{"parent/ws/a", root + "/a"}, // out and back in again: the real path is inside
		{"parent", ""},
		{"parent/other", ""},
	}
	for _, tc := range tests {
		got, err := ws.Resolve(tc.path)
		if tc.want == "" {
			if !errors.Is(err, builtin.ErrEscapes) {
				t.Errorf("Resolve(%q) = %q, %v; want ErrEscapes", tc.path, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", tc.path, got, err, tc.want)
		}
	}
	if _, err := ws.Resolve("loop/x"); err == nil || errors.Is(err, builtin.ErrEscapes) {
		t.Errorf("Resolve(loop/x) err = %v, want a symlink loop error", err)
	}
	if _, err := ws.Resolve("a\x00b"); err == nil {
		t.Error("Resolve with a NUL byte: want an error")
	}
	if _, err := builtin.NewWorkspace("relative"); err == nil {
		t.Error("NewWorkspace(relative): want an error")
	}
}
