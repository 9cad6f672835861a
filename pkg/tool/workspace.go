package tool

import "context"

// Workspace is the directory a call keeps its files in when the caller
// named a session: each session has its own, so two agents on one server
// never see each other's files. The server puts it in the call's context
// (WithWorkspace); a tool that works with files takes it from there
// (WorkspaceFrom) and falls back to its own configured directory when there
// is none.
type Workspace interface {
	// Dir is the session's directory: absolute, existing, with symlinks
	// resolved. Asking for it tells the session that the call uses its
	// files, so their size is measured again when the call ends.
	Dir() string
	// Grow reports whether the workspace may grow by n bytes (n may be
	// negative). The error is worded for the model: a tool returns it as a
	// failure instead of writing.
	Grow(n int64) error
	// FileSizeLimit is the largest file a command run for the call may
	// write, in bytes (what is left of the session's quota, 0 when it is
	// used up); negative means no limit.
	FileSizeLimit() int64
}

type workspaceKey struct{}

// WithWorkspace returns ctx carrying the call's workspace.
func WithWorkspace(ctx context.Context, w Workspace) context.Context {
	return context.WithValue(ctx, workspaceKey{}, w)
}

// WorkspaceFrom returns the call's workspace, or nil when the caller named
// no session (the tool uses its own directory).
func WorkspaceFrom(ctx context.Context) Workspace {
	w, _ := ctx.Value(workspaceKey{}).(Workspace)
	return w
}
