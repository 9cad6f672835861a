// Package builtin provides the ten built-in tools, confined to a workspace
// directory, published into the registry's builtin layer with source label
// "builtin":
//
//   - bash: run a shell command; combined stdout+stderr, exit code in metadata
//   - read: read a file, whole or a window of lines
//   - write: create or overwrite a file, parents created
//   - edit: exact string replacement in a file
//   - grep: RE2 search of file contents, FILE:LINE:TEXT
//   - glob: find files by glob pattern
//   - webfetch: GET a URL as markdown, text or html
//   - question: ask the user; the call suspends until answered
//   - apply_patch: add, update and delete files in one all-or-nothing patch
//   - todowrite: render a todo list (no state kept)
//
// # Workspace
//
// Every path argument (and every path inside a patch) goes through one
// resolver, [Workspace.Resolve]: relative paths resolve against the root,
// absolute paths must already be inside it, and symlinks are followed by
// the resolver itself, component by component, so a path leading out via
// "..", an absolute path or a symlink (live or dangling, for files that do
// not exist yet too) fails with "NAME: path escapes the workspace: P".
// grep and glob do not descend into symlinked directories and read a
// symlinked file only when its target is inside the workspace. The check
// and the use are not one atomic step: a process that rewrites symlinks in
// the workspace while a call runs can race it, so do not share a workspace
// with untrusted writers.
//
// # bash
//
// Commands run with bash when it is on PATH, else /bin/sh, as
// `SHELL -c COMMAND`, in workdir (default: the root), with stdin from
// /dev/null. The environment is the server's own environment, unchanged:
// nothing is added, in particular no toolnexus secret; but anything the
// server was started with (including variables a config refers to as
// ${VAR}) is visible to the command, so start the server with only what
// commands may see. Each command gets its own process group; on timeout,
// on cancellation by the caller and when the command returns, the whole
// group is killed with SIGKILL, so background jobs do not outlive the call.
// Output is read through a pipe owned by the tool: a grandchild that leaves
// the group and holds the pipe delays the result by at most two seconds.
// Output beyond the cap (sources.Env.OutputCap, default 1 MiB) is dropped
// and counted: "\n[output truncated: N bytes omitted]" ends the output and
// metadata has "truncated": true.
//
// # question
//
// question returns a pending result (outcome PENDING, kind "question"): an
// entry of the suspended-call store (sources.Env.Pending) bound to the call
// (principal, session, tool, canonical arguments), so it counts against
// limits.maxPending, expires at limits.pendingTimeout, and is answered
// once, by the call that asked, on any replica sharing the store. The same
// call asking again while it is open gets the same ID. Executing the tool
// again with the same arguments and Call.Answer set returns the answer's
// data as compact JSON.
//
// # Config
//
// The `builtins` section: absent, null or true turns all ten on; false,
// {"disabled": true} or {"enabled": false} turns the source off
// (disabled:true wins); {"tools": {"bash": false}} drops tools by name;
// {"workspace": "DIR"} sets the root, relative to the config file.
package builtin
