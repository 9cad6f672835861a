package builtin

import (
	"context"
	"os"
	"path/filepath"
	"strconv"

	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// SessionsDir is the directory under the workspace root where earlier
// versions kept the sessions' workspaces (they now live outside it, in
// sessions.root). Calls without a session still may not reach into one
// left behind: file tools refuse it as outside the workspace and searches
// skip it.
const SessionsDir = ".sessions"

// warnOldSessions names, in a warning, a sessions directory an earlier
// version left inside the workspace: calls without a session are refused
// it, but its files are not served to their sessions any more, so the
// operator has to move what they need.
func warnOldSessions(cfg Config, env sources.Env) {
	ws, err := workspaceRoot(cfg, env)
	if err != nil {
		return
	}
	old := filepath.Join(ws, SessionsDir)
	if fi, err := os.Stat(old); err == nil && fi.IsDir() {
		env.Log().Warn("an old sessions directory lies inside the workspace; "+
			"sessions now live in sessions.root and these are not served: move what you need and delete it",
			"old", old)
	}
}

// forCall is the one place a call's workspace is chosen: the session's
// (tool.WorkspaceFrom) when the caller named one, else the configured
// root. A session call gets a copy of the toolset confined to the session's
// directory and bound by its quota; a call without one gets t itself.
func (t *toolset) forCall(ctx context.Context) (*toolset, *tool.Result) {
	sw := tool.WorkspaceFrom(ctx)
	if sw == nil {
		return t, nil
	}
	dir := sw.Dir()
	ws, err := NewWorkspace(dir)
	if err != nil {
		r := fail("workspace: %v", err)
		return nil, &r
	}
	// The session's directory is handed over with symlinks resolved; if
	// it resolves elsewhere now, something replaced it with a link (a
	// command in the session's parent directory): never follow that into
	// another session's files.
	if ws.Root() != filepath.Clean(dir) {
		r := fail("workspace: the session's directory %s was replaced by a symbolic link; delete the session to start it afresh", filepath.Base(dir))
		return nil, &r
	}
	c := *t
	c.ws = ws
	c.session = sw
	return &c, nil
}

// hiddenFromShared reports whether real (a resolved path) lies in the
// sessions' directory while the call works in the shared workspace.
func (t *toolset) hiddenFromShared(real string) bool {
	return t.session == nil && within(real, filepath.Join(t.ws.Root(), SessionsDir))
}

// grow asks the session's quota whether the workspace may grow by n bytes;
// the failure names the tool. Calls without a session have no quota.
func (t *toolset) grow(name string, n int64) *tool.Result {
	if t.session == nil {
		return nil
	}
	if err := t.session.Grow(n); err != nil {
		r := fail("%s: %v", name, err).Refused(tool.RefusalSessionQuota)
		return &r
	}
	return nil
}

// fileGrowth is how much writing size bytes to rel (beneath root) grows
// the workspace.
func fileGrowth(root *os.Root, rel string, size int) int64 {
	if fi, err := root.Lstat(rel); err == nil && fi.Mode().IsRegular() {
		return int64(size) - fi.Size()
	}
	return int64(size)
}

// patchGrowth is how much committing a patch's final states grows the
// workspace.
func patchGrowth(root *os.Root, files []*fileState) int64 {
	var n int64
	for _, st := range files {
		size := 0
		if st.exists {
			size = len(st.content)
		}
		n += fileGrowth(root, st.rel, size)
	}
	return n
}

// limitFileSize bounds every file a session's command writes to what is
// left of its quota (the shell's `ulimit -f`, in 1024-byte blocks; a write
// past it fails with "File size limit exceeded"). The limit is set by the
// shell itself, before the command's first word runs, and on the same line,
// so the command's own line numbers are unchanged.
func (t *toolset) limitFileSize(command string) string {
	if t.session == nil {
		return command
	}
	limit := t.session.FileSizeLimit()
	if limit < 0 {
		return command
	}
	// Rounded up: a file may pass the quota by less than a block, which
	// the accounting after the call then sees.
	blocks := (limit + 1023) / 1024
	// Quiet: a lower hard limit already in force (a sandbox's) wins, and
	// raising it is refused, which is as it should be.
	return "ulimit -f " + strconv.FormatInt(blocks, 10) + " 2>/dev/null; " + command
}
