package builtin_test

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

func TestApplyPatch(t *testing.T) {
	tests := []struct {
		name  string
		patch string
		want  want
		after map[string]string // file → content after the call ("<missing>" for none)
	}{
		{"add", "*** Begin Patch\n*** Add File: new/n.txt\n+hello\n+world\n*** End Patch",
			want{output: "Applied patch: 1 file operation", meta: map[string]any{"added": 1, "updated": 0, "deleted": 0}},
			map[string]string{"new/n.txt": "hello\nworld"}},
		{"update", "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+TWO\n three\n*** End Patch",
			want{output: "Applied patch: 1 file operation", meta: map[string]any{"added": 0, "updated": 1, "deleted": 0}},
			map[string]string{"a.txt": "one\nTWO\nthree\nfour\n"}},
		{"two hunks", "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+1\n@@\n-four\n+4\n*** End Patch",
			want{output: "Applied patch: 1 file operation"},
			map[string]string{"a.txt": "1\ntwo\nthree\n4\n"}},
		{"append hunk", "*** Begin Patch\n*** Update File: a.txt\n@@\n+five\n*** End Patch",
			want{output: "Applied patch: 1 file operation"},
			map[string]string{"a.txt": "one\ntwo\nthree\nfour\nfive"}},
		{"delete", "*** Begin Patch\n*** Delete File: b.txt\n*** End Patch",
			want{output: "Applied patch: 1 file operation", meta: map[string]any{"added": 0, "updated": 0, "deleted": 1}},
			map[string]string{"b.txt": "<missing>"}},
		{"several", "*** Begin Patch\n*** Add File: c.txt\n+c\n*** Update File: a.txt\n-two\n+2\n*** Delete File: b.txt\n*** End Patch",
			want{output: "Applied patch: 3 file operations", meta: map[string]any{"added": 1, "updated": 1, "deleted": 1}},
			map[string]string{"c.txt": "c", "a.txt": "one\n2\nthree\nfour\n", "b.txt": "<missing>"}},
		{"add then update the same file", "*** Begin Patch\n*** Add File: c.txt\n+x\n*** Update File: c.txt\n-x\n+y\n*** End Patch",
			want{output: "Applied patch: 2 file operations"},
			map[string]string{"c.txt": "y"}},
		{"missing begin", "*** Add File: c.txt\n+c\n*** End Patch",
			want{output: "apply_patch: missing '*** Begin Patch'", isError: true}, map[string]string{"c.txt": "<missing>"}},
		{"missing end", "*** Begin Patch\n*** Add File: c.txt\n+c\n",
			want{output: "apply_patch: missing '*** End Patch'", isError: true}, map[string]string{"c.txt": "<missing>"}},
		{"unexpected line", "*** Begin Patch\n*** Frobnicate File: a.txt\n*** End Patch",
			want{output: "apply_patch: unexpected line: *** Frobnicate File: a.txt", isError: true}, nil},
		{"already exists", "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch",
			want{output: "apply_patch: file already exists: a.txt", isError: true}, map[string]string{"a.txt": "one\ntwo\nthree\nfour\n"}},
		{"update missing", "*** Begin Patch\n*** Update File: nope.txt\n-x\n+y\n*** End Patch",
			want{output: "apply_patch: file not found: nope.txt", isError: true}, nil},
		{"delete missing", "*** Begin Patch\n*** Delete File: nope.txt\n*** End Patch",
			want{output: "apply_patch: file not found: nope.txt", isError: true}, nil},
		{"hunk mismatch", "*** Begin Patch\n*** Update File: a.txt\n-zzz\n+y\n*** End Patch",
			want{output: "apply_patch: hunk does not match file contents", isError: true, meta: map[string]any{"path": "a.txt"}},
			map[string]string{"a.txt": "one\ntwo\nthree\nfour\n"}},
		{"patchText required", "",
			want{output: "apply_patch: patchText is required", isError: true, outcome: tool.OutcomeInvalidArguments}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := newKit(t)
			k.write("a.txt", "one\ntwo\nthree\nfour\n")
			k.write("b.txt", "bee\n")
			check(t, k.run("apply_patch", map[string]any{"patchText": tc.patch}), tc.want)
			for f, content := range tc.after {
				if got := k.read(f); got != content {
					t.Errorf("%s = %q, want %q", f, got, content)
				}
			}
		})
	}
}

// A bad second hunk fails the whole patch: no file is added, changed or
// deleted, no directory is created and no temporary file is left behind.
func TestApplyPatchIsAtomic(t *testing.T) {
	k := newKit(t)
	k.write("a.txt", "one\ntwo\n")
	k.write("b.txt", "bee\n")
	k.write("c.txt", "sea\n")
	before := listTree(t, k.dir)
	patch := "*** Begin Patch\n" +
		"*** Add File: newdir/new.txt\n+new\n" +
		"*** Update File: a.txt\n@@\n-one\n+ONE\n@@\n-not there\n+x\n" +
		"*** Delete File: c.txt\n" +
		"*** Update File: b.txt\n-bee\n+BEE\n" +
		"*** End Patch"
	check(t, k.run("apply_patch", map[string]any{"patchText": patch}),
		want{output: "apply_patch: hunk does not match file contents", isError: true})
	if after := listTree(t, k.dir); !reflect.DeepEqual(after, before) {
		t.Errorf("workspace changed:\nbefore %v\nafter  %v", before, after)
	}

	// The same with a failure in the last operation, after the others
	// were all checked good.
	patch = "*** Begin Patch\n*** Update File: a.txt\n-one\n+ONE\n*** Add File: b.txt\n+x\n*** End Patch"
	check(t, k.run("apply_patch", map[string]any{"patchText": patch}),
		want{output: "apply_patch: file already exists: b.txt", isError: true})
	if after := listTree(t, k.dir); !reflect.DeepEqual(after, before) {
		t.Errorf("workspace changed:\nbefore %v\nafter  %v", before, after)
	}
}

// A patch that cannot be staged (a read-only directory) fails before any
// file is replaced.
func TestApplyPatchWriteFailureChangesNothing(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root ignores directory permissions")
	}
	k := newKit(t)
	k.write("a.txt", "one\n")
	k.write("ro/b.txt", "bee\n")
	must(t, os.Chmod(filepath.Join(k.dir, "ro"), 0o555))
	t.Cleanup(func() { os.Chmod(filepath.Join(k.dir, "ro"), 0o755) })
	before := listTree(t, k.dir)
	res := k.run("apply_patch", map[string]any{"patchText": "*** Begin Patch\n*** Update File: a.txt\n-one\n+ONE\n*** Update File: ro/b.txt\n-bee\n+BEE\n*** End Patch"})
	if !res.IsError {
		t.Fatalf("want a failure, got %q", res.Output)
	}
	if after := listTree(t, k.dir); !reflect.DeepEqual(after, before) {
		t.Errorf("workspace changed:\nbefore %v\nafter  %v", before, after)
	}
}

// listTree maps every path under dir to its content ("<dir>" for
// directories).
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if fi.IsDir() {
			out = append(out, rel+"=<dir>")
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out = append(out, rel+"="+string(b))
		return nil
	})
	must(t, err)
	sort.Strings(out)
	return out
}
