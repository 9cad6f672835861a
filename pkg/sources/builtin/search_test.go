package builtin_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

func searchTree(t *testing.T) *kit {
	t.Helper()
	k := newKit(t)
	k.write("a.txt", "hello\nworld\nhello again\r\n")
	k.write("sub/b.md", "say hello\n")
	k.write("sub/deep/d.md", "nothing here\n")
	k.write("a/b", "hello from a/b\n")
	k.write(".git/config", "hello git\n")
	k.write("node_modules/m/index.js", "hello module\n")
	k.write("bin.dat", "hello\x00binary\n")
	// A symlinked file inside the workspace is searched; one leading out
	// is not.
	out := outside(t)
	if err := os.Symlink(filepath.Join(out, "secret.txt"), filepath.Join(k.dir, "leak.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub/b.md", filepath.Join(k.dir, "z-link.md")); err != nil {
		t.Fatal(err)
	}
	return k
}

func TestGrep(t *testing.T) {
	k := searchTree(t)
	tests := []struct {
		name string
		args any
		want want
	}{
		{"lexical order, root-relative, skips .git node_modules binaries and links out",
			map[string]any{"pattern": "hello"},
			want{output: "a.txt:1:hello\na.txt:3:hello again\na/b:1:hello from a/b\nsub/b.md:1:say hello\nz-link.md:1:say hello",
				meta: map[string]any{"count": 5}}},
		{"regex", map[string]any{"pattern": `^hel+o$`},
			want{output: "a.txt:1:hello", meta: map[string]any{"count": 1}}},
		{"limit", map[string]any{"pattern": "hello", "limit": 2},
			want{output: "a.txt:1:hello\na.txt:3:hello again", meta: map[string]any{"count": 2, "truncated": true}}},
		{"limit exactly reached", map[string]any{"pattern": "again", "limit": 1},
			want{output: "a.txt:3:hello again", meta: map[string]any{"count": 1}}},
		{"include base name", map[string]any{"pattern": "hello", "include": "*.md"},
			want{output: "sub/b.md:1:say hello\nz-link.md:1:say hello", meta: map[string]any{"count": 2}}},
		{"include braces", map[string]any{"pattern": "hello", "include": "*.{txt,md}"},
			want{output: "a.txt:1:hello\na.txt:3:hello again\nsub/b.md:1:say hello\nz-link.md:1:say hello", meta: map[string]any{"count": 4}}},
		{"include path", map[string]any{"pattern": ".", "include": "sub/**/*.md"},
			want{output: "sub/b.md:1:say hello\nsub/deep/d.md:1:nothing here", meta: map[string]any{"count": 2}}},
		{"path", map[string]any{"pattern": "hello", "path": "sub"},
			want{output: "sub/b.md:1:say hello", meta: map[string]any{"count": 1}}},
		{"path is a file", map[string]any{"pattern": "world", "path": "a.txt"},
			want{output: "a.txt:2:world", meta: map[string]any{"count": 1}}},
		{"explicit node_modules path", map[string]any{"pattern": "hello", "path": "node_modules"},
			want{output: "node_modules/m/index.js:1:hello module", meta: map[string]any{"count": 1}}},
		{"no match", map[string]any{"pattern": "absent"},
			want{output: "", meta: map[string]any{"count": 0}}},
		{"invalid regex", map[string]any{"pattern": "("},
			want{output: "grep: invalid regex: missing closing ): `(`", isError: true}},
		{"pattern required", `{}`,
			want{output: "grep: pattern is required", isError: true, outcome: tool.OutcomeInvalidArguments}},
		{"bad limit", map[string]any{"pattern": "x", "limit": 0},
			want{output: "grep: limit must be >= 1", isError: true, outcome: tool.OutcomeInvalidArguments}},
		{"missing path", map[string]any{"pattern": "x", "path": "nope"},
			want{output: "grep: path not found: nope", isError: true}},
		{"bad include", map[string]any{"pattern": "x", "include": "[a"},
			want{output: "grep: invalid include pattern: [a", isError: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { check(t, k.run("grep", tc.args), tc.want) })
	}
}

func TestGrepOutputCap(t *testing.T) {
	k := newKitCap(t, 30)
	k.write("f.txt", strings.Repeat("match\n", 10))
	res := k.run("grep", map[string]any{"pattern": "match"})
	if !strings.HasSuffix(res.Output, "bytes omitted]") || res.Metadata["truncated"] != true || res.IsError {
		t.Errorf("result = %+v, want a capped success", res)
	}
}

func TestGlob(t *testing.T) {
	k := searchTree(t)
	k.write("a.md", "")
	k.write("c.txt", "")
	tests := []struct {
		name string
		args any
		want want
	}{
		{"base name anywhere", map[string]any{"pattern": "*.md"},
			want{output: "a.md\nsub/b.md\nsub/deep/d.md\nz-link.md", meta: map[string]any{"count": 4}}},
		{"double star", map[string]any{"pattern": "**/*.md"},
			want{output: "a.md\nsub/b.md\nsub/deep/d.md\nz-link.md", meta: map[string]any{"count": 4}}},
		{"star stays in one segment", map[string]any{"pattern": "sub/*.md"},
			want{output: "sub/b.md", meta: map[string]any{"count": 1}}},
		{"double star below a dir", map[string]any{"pattern": "sub/**"},
			want{output: "sub/b.md\nsub/deep/d.md", meta: map[string]any{"count": 2}}},
		{"question mark", map[string]any{"pattern": "?.txt"},
			want{output: "a.txt\nc.txt", meta: map[string]any{"count": 2}}},
		{"braces", map[string]any{"pattern": "*.{txt,dat}"},
			want{output: "a.txt\nbin.dat\nc.txt", meta: map[string]any{"count": 3}}},
		{"byte order, not walk order", map[string]any{"pattern": "a*/**"},
			want{output: "a.md\na.txt\na/b", meta: map[string]any{"count": 3}}},
		{"files only", map[string]any{"pattern": "sub"},
			want{output: "", meta: map[string]any{"count": 0}}},
		{"links out are left out", map[string]any{"pattern": "leak.txt"},
			want{output: "", meta: map[string]any{"count": 0}}},
		{"skips .git and node_modules", map[string]any{"pattern": "**/*.js"},
			want{output: "", meta: map[string]any{"count": 0}}},
		{"path", map[string]any{"pattern": "*.md", "path": "sub"},
			want{output: "sub/b.md\nsub/deep/d.md", meta: map[string]any{"count": 2}}},
		{"path-relative pattern", map[string]any{"pattern": "deep/*", "path": "sub"},
			want{output: "sub/deep/d.md", meta: map[string]any{"count": 1}}},
		{"limit", map[string]any{"pattern": "*.md", "limit": 2},
			want{output: "a.md\nsub/b.md", meta: map[string]any{"count": 2, "truncated": true}}},
		{"no match", map[string]any{"pattern": "*.none"},
			want{output: "", meta: map[string]any{"count": 0}}},
		{"invalid pattern", map[string]any{"pattern": "[a"},
			want{output: "glob: invalid pattern: [a", isError: true}},
		{"pattern required", `{"path": "sub"}`,
			want{output: "glob: pattern is required", isError: true, outcome: tool.OutcomeInvalidArguments}},
		{"bad limit", map[string]any{"pattern": "*", "limit": -3},
			want{output: "glob: limit must be >= 1", isError: true, outcome: tool.OutcomeInvalidArguments}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { check(t, k.run("glob", tc.args), tc.want) })
	}
}
