package builtin_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

func TestRead(t *testing.T) {
	k := newKitCap(t, 64)
	k.write("f.txt", "alpha\nbeta\nalpha\n")
	k.write("nonl.txt", "one\ntwo")
	k.write("empty.txt", "")
	k.write("big.txt", strings.Repeat("z", 100))
	k.write("dir/x.txt", "x")
	tests := []struct {
		name string
		args any
		want want
	}{
		{"whole file", map[string]any{"path": "f.txt"}, want{output: "alpha\nbeta\nalpha\n"}},
		{"absolute path inside", map[string]any{"path": filepath.Join(k.dir, "f.txt")}, want{output: "alpha\nbeta\nalpha\n"}},
		{"offset and limit", map[string]any{"path": "f.txt", "offset": 2, "limit": 1}, want{output: "beta"}},
		{"offset only", map[string]any{"path": "f.txt", "offset": 2}, want{output: "beta\nalpha"}},
		{"limit only", map[string]any{"path": "f.txt", "limit": 2}, want{output: "alpha\nbeta"}},
		{"limit past the end", map[string]any{"path": "f.txt", "offset": 3, "limit": 10}, want{output: "alpha"}},
		{"offset past the end", map[string]any{"path": "f.txt", "offset": 9}, want{output: ""}},
		{"no final newline", map[string]any{"path": "nonl.txt", "offset": 2}, want{output: "two"}},
		{"empty file", map[string]any{"path": "empty.txt"}, want{output: ""}},
		{"empty file window", map[string]any{"path": "empty.txt", "offset": 1}, want{output: ""}},
		{"output cap", map[string]any{"path": "big.txt"},
			want{output: strings.Repeat("z", 64) + "\n[output truncated: 36 bytes omitted]", meta: map[string]any{"truncated": true}}},
		{"missing", map[string]any{"path": "nope.txt"}, want{output: "read: file not found: nope.txt", isError: true}},
		{"directory", map[string]any{"path": "dir"}, want{output: "read: dir is a directory", isError: true}},
		{"path required", `{}`, want{output: "read: path is required", isError: true, outcome: tool.OutcomeInvalidArguments}},
		{"bad offset", map[string]any{"path": "f.txt", "offset": 0},
			want{output: "read: offset must be a line number >= 1", isError: true, outcome: tool.OutcomeInvalidArguments}},
		{"bad limit", map[string]any{"path": "f.txt", "limit": -1},
			want{output: "read: limit must be a number of lines >= 1", isError: true, outcome: tool.OutcomeInvalidArguments}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { check(t, k.run("read", tc.args), tc.want) })
	}
}

// A line longer than the read buffer comes through whole, and the window
// still counts lines right after it.
func TestReadLongLines(t *testing.T) {
	k := newKit(t)
	long := strings.Repeat("L", 200_000)
	k.write("long.txt", "first\n"+long+"\nthird\n")
	check(t, k.run("read", map[string]any{"path": "long.txt", "offset": 2, "limit": 2}), want{output: long + "\nthird"})
	check(t, k.run("read", map[string]any{"path": "long.txt", "offset": 3}), want{output: "third"})
}

func TestWrite(t *testing.T) {
	k := newKit(t)
	k.write("old.txt", "old content")
	tests := []struct {
		name string
		args any
		want want
		file string // checked when set: path and expected content
		body string
	}{
		{"create", map[string]any{"path": "new.txt", "content": "hello"},
			want{output: "Wrote 5 bytes to new.txt", meta: map[string]any{"bytes": 5}}, "new.txt", "hello"},
		{"parents created", map[string]any{"path": "a/b/c.txt", "content": "deep"},
			want{output: "Wrote 4 bytes to a/b/c.txt", meta: map[string]any{"bytes": 4}}, "a/b/c.txt", "deep"},
		{"overwrite", map[string]any{"path": "old.txt", "content": "new"},
			want{output: "Wrote 3 bytes to old.txt", meta: map[string]any{"bytes": 3}}, "old.txt", "new"},
		{"empty content", map[string]any{"path": "empty.txt", "content": ""},
			want{output: "Wrote 0 bytes to empty.txt", meta: map[string]any{"bytes": 0}}, "empty.txt", ""},
		{"bytes not characters", map[string]any{"path": "u.txt", "content": "héllo"},
			want{output: "Wrote 6 bytes to u.txt", meta: map[string]any{"bytes": 6}}, "u.txt", "héllo"},
		{"directory", map[string]any{"path": "a", "content": "x"},
			want{output: "write: a is a directory", isError: true}, "", ""},
		{"path required", map[string]any{"content": "x"},
			want{output: "write: path is required", isError: true, outcome: tool.OutcomeInvalidArguments}, "", ""},
		{"content required", map[string]any{"path": "x.txt"},
			want{output: "write: content is required", isError: true, outcome: tool.OutcomeInvalidArguments}, "x.txt", "<missing>"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			check(t, k.run("write", tc.args), tc.want)
			if tc.file != "" {
				if got := k.read(tc.file); got != tc.body {
					t.Errorf("%s = %q, want %q", tc.file, got, tc.body)
				}
			}
		})
	}
}

func TestEdit(t *testing.T) {
	tests := []struct {
		name    string
		content string
		args    map[string]any
		want    want
		after   string
	}{
		{"single", "hello world", map[string]any{"oldString": "world", "newString": "there"},
			want{output: "Edited f.txt (1 replacement)", meta: map[string]any{"replacements": 1}}, "hello there"},
		{"replaceAll", "a-a-a", map[string]any{"oldString": "a", "newString": "b", "replaceAll": true},
			want{output: "Edited f.txt (3 replacements)", meta: map[string]any{"replacements": 3}}, "b-b-b"},
		{"replaceAll with one", "xay", map[string]any{"oldString": "a", "newString": "", "replaceAll": true},
			want{output: "Edited f.txt (1 replacement)", meta: map[string]any{"replacements": 1}}, "xy"},
		{"multiline", "one\ntwo\nthree\n", map[string]any{"oldString": "two\nthree", "newString": "2\n3"},
			want{output: "Edited f.txt (1 replacement)", meta: map[string]any{"replacements": 1}}, "one\n2\n3\n"},
		{"not found", "hello", map[string]any{"oldString": "bye", "newString": "x"},
			want{output: "edit: oldString not found in f.txt", isError: true}, "hello"},
		{"not unique", "a-a", map[string]any{"oldString": "a", "newString": "b"},
			want{output: "edit: oldString is not unique in f.txt (2 occurrences); use replaceAll", isError: true}, "a-a"},
		{"empty oldString", "a", map[string]any{"oldString": "", "newString": "b"},
			want{output: "edit: oldString must not be empty; use write to create a file", isError: true, outcome: tool.OutcomeInvalidArguments}, "a"},
		{"oldString required", "a", map[string]any{"newString": "b"},
			want{output: "edit: oldString is required", isError: true, outcome: tool.OutcomeInvalidArguments}, "a"},
		{"newString required", "a", map[string]any{"oldString": "a"},
			want{output: "edit: newString is required", isError: true, outcome: tool.OutcomeInvalidArguments}, "a"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := newKit(t)
			k.write("f.txt", tc.content)
			tc.args["path"] = "f.txt"
			check(t, k.run("edit", tc.args), tc.want)
			if got := k.read("f.txt"); got != tc.after {
				t.Errorf("file = %q, want %q", got, tc.after)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		k := newKit(t)
		check(t, k.run("edit", map[string]any{"path": "nope.txt", "oldString": "a", "newString": "b"}),
			want{output: "edit: file not found: nope.txt", isError: true})
	})
	t.Run("keeps the file mode", func(t *testing.T) {
		k := newKit(t)
		k.write("run.sh", "echo a\n")
		if err := os.Chmod(filepath.Join(k.dir, "run.sh"), 0o750); err != nil {
			t.Fatal(err)
		}
		check(t, k.run("edit", map[string]any{"path": "run.sh", "oldString": "a", "newString": "b"}),
			want{output: "Edited run.sh (1 replacement)", meta: map[string]any{"replacements": 1}})
		fi, err := os.Stat(filepath.Join(k.dir, "run.sh"))
		if err != nil || fi.Mode().Perm() != 0o750 {
			t.Errorf("mode = %v (%v), want 0750", fi.Mode().Perm(), err)
		}
	})
}

// A FIFO would block an open forever; the file tools refuse it up front.
func TestNonRegularFilesRefused(t *testing.T) {
	k := newKit(t)
	must(t, syscallMkfifo(filepath.Join(k.dir, "pipe")))
	check(t, k.run("read", map[string]any{"path": "pipe"}), want{output: "read: pipe is not a regular file", isError: true})
	check(t, k.run("edit", map[string]any{"path": "pipe", "oldString": "a", "newString": "b"}),
		want{output: "edit: pipe is not a regular file", isError: true})
	check(t, k.run("apply_patch", map[string]any{"patchText": "*** Begin Patch\n*** Delete File: pipe\n*** End Patch"}),
		want{output: "apply_patch: pipe is not a regular file", isError: true})
	check(t, k.run("grep", map[string]any{"pattern": "x", "path": "pipe"}), want{output: "", meta: map[string]any{"count": 0}})
}

func syscallMkfifo(p string) error { return syscall.Mkfifo(p, 0o600) }
