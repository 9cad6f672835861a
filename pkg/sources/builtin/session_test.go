package builtin_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/sources/builtin"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// quotaWS is a session workspace with a byte budget, as the server's
// session manager gives one to a call.
type quotaWS struct {
	dir   string
	used  atomic.Int64
	limit int64
}

func (q *quotaWS) Dir() string { return q.dir }

func (q *quotaWS) Grow(n int64) error {
	if n > 0 && q.used.Load()+n > q.limit {
		return fmt.Errorf("the session's workspace is over its quota (sessions.maxBytes = %d)", q.limit)
	}
	return nil
}

func (q *quotaWS) FileSizeLimit() int64 { return max(q.limit-q.used.Load(), 0) }

func sessionCtx(t *testing.T, k *kit, rel string, limit int64) (context.Context, *quotaWS) {
	t.Helper()
	dir := filepath.Join(k.dir, builtin.SessionsDir, rel)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	q := &quotaWS{dir: dir, limit: limit}
	return tool.WithWorkspace(context.Background(), q), q
}

func TestSessionWorkspacesAreSeparate(t *testing.T) {
	k := newKit(t)
	a, _ := sessionCtx(t, k, "p/a", 1<<20)
	b, _ := sessionCtx(t, k, "p/b", 1<<20)
	for ctx, content := range map[context.Context]string{a: "from a", b: "from b"} {
		if r := k.runCtx(ctx, "write", map[string]any{"path": "notes.txt", "content": content}); r.IsError {
			t.Fatal(r.Output)
		}
	}
	if r := k.runCtx(a, "read", map[string]any{"path": "notes.txt"}); r.Output != "from a" {
		t.Fatalf("session a reads %q", r.Output)
	}
	if r := k.runCtx(b, "bash", map[string]any{"command": "cat notes.txt"}); r.Output != "from b" {
		t.Fatalf("session b's bash reads %q", r.Output)
	}
	if r := k.run("read", map[string]any{"path": "notes.txt"}); !r.IsError {
		t.Fatalf("the shared workspace sees a session's file: %q", r.Output)
	}
	// Out of one session into the other: refused like any escape.
	for _, p := range []string{"../b/notes.txt", filepath.Join(k.dir, builtin.SessionsDir, "p/b/notes.txt")} {
		if r := k.runCtx(a, "read", map[string]any{"path": p}); !r.IsError || !strings.Contains(r.Output, "escapes") {
			t.Fatalf("read %s from session a: %+v", p, r)
		}
	}
}

func TestSharedWorkspaceCannotReachSessions(t *testing.T) {
	k := newKit(t)
	a, _ := sessionCtx(t, k, "p/a", 1<<20)
	if r := k.runCtx(a, "write", map[string]any{"path": "secret.txt", "content": "needle"}); r.IsError {
		t.Fatal(r.Output)
	}
	if r := k.run("read", map[string]any{"path": builtin.SessionsDir + "/p/a/secret.txt"}); !r.IsError || !strings.Contains(r.Output, "escapes") {
		t.Fatalf("shared read of a session file: %+v", r)
	}
	if r := k.run("write", map[string]any{"path": builtin.SessionsDir + "/p/a/secret.txt", "content": "x"}); !r.IsError {
		t.Fatalf("shared write into a session: %+v", r)
	}
	// A symlink in the shared workspace that points into a session is
	// refused where it lands.
	if err := os.Symlink(filepath.Join(k.dir, builtin.SessionsDir, "p/a"), filepath.Join(k.dir, "peek")); err != nil {
		t.Fatal(err)
	}
	if r := k.run("read", map[string]any{"path": "peek/secret.txt"}); !r.IsError {
		t.Fatalf("shared read through a symlink into a session: %+v", r)
	}
	if r := k.run("grep", map[string]any{"pattern": "needle"}); r.IsError || r.Output != "" {
		t.Fatalf("shared grep finds session files: %+v", r)
	}
	if r := k.run("glob", map[string]any{"pattern": "**/*.txt"}); r.IsError || r.Output != "" {
		t.Fatalf("shared glob lists session files: %+v", r)
	}
}

func TestSessionQuotaRefusesWrites(t *testing.T) {
	k := newKit(t)
	ctx, q := sessionCtx(t, k, "p/q", 100)
	r := k.runCtx(ctx, "write", map[string]any{"path": "big.txt", "content": strings.Repeat("x", 101)})
	if !r.IsError || !strings.Contains(r.Output, "write: the session's workspace is over its quota") {
		t.Fatalf("write past the quota: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(q.dir, "big.txt")); err == nil {
		t.Fatal("the refused write left a file")
	}
	if r := k.runCtx(ctx, "write", map[string]any{"path": "ok.txt", "content": strings.Repeat("x", 60)}); r.IsError {
		t.Fatal(r.Output)
	}
	q.used.Store(60)
	r = k.runCtx(ctx, "edit", map[string]any{"path": "ok.txt", "oldString": "x", "newString": "yy", "replaceAll": true})
	if !r.IsError || !strings.Contains(r.Output, "edit: ") {
		t.Fatalf("edit past the quota: %+v", r)
	}
	r = k.runCtx(ctx, "apply_patch", map[string]any{"patchText": "*** Begin Patch\n*** Add File: more.txt\n+" + strings.Repeat("z", 50) + "\n*** End Patch"})
	if !r.IsError || !strings.Contains(r.Output, "apply_patch: ") {
		t.Fatalf("patch past the quota: %+v", r)
	}
	// Shrinking is always allowed.
	if r := k.runCtx(ctx, "write", map[string]any{"path": "ok.txt", "content": "x"}); r.IsError {
		t.Fatalf("a write that shrinks the workspace: %s", r.Output)
	}
	// bash is bounded by what is left: nothing.
	q.used.Store(100)
	r = k.runCtx(ctx, "bash", map[string]any{"command": "ulimit -f; head -c 4096 /dev/zero > blob"})
	if !r.IsError || !strings.HasPrefix(r.Output, "0\n") {
		t.Fatalf("bash over the file-size limit: %+v", r)
	}
}

// A session directory swapped for a symlink to another session (which a
// command could do from the parent directory) is refused, not followed.
func TestSessionDirectoryReplacedByASymlink(t *testing.T) {
	k := newKit(t)
	victim, _ := sessionCtx(t, k, "p/victim", 1<<20)
	if r := k.runCtx(victim, "write", map[string]any{"path": "secret.txt", "content": "victim's"}); r.IsError {
		t.Fatal(r.Output)
	}
	attacker, q := sessionCtx(t, k, "p/attacker", 1<<20)
	if err := os.Remove(q.dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("victim", q.dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"read", "bash"} {
		args := map[string]any{"path": "secret.txt"}
		if name == "bash" {
			args = map[string]any{"command": "cat secret.txt"}
		}
		if r := k.runCtx(attacker, name, args); !r.IsError || !strings.Contains(r.Output, "replaced by a symbolic link") {
			t.Fatalf("%s through a swapped session directory: %+v", name, r)
		}
	}
}
