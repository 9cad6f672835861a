package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The command's view of the filesystem. A command started through the
// helper may get a mount namespace of its own (a copy of the host's, owned
// by the helper's user namespace, so nothing propagates back) in which:
//
//   - each private directory (the sessions' root) is covered by an empty
//     tmpfs, so another session's files cannot even be stat-ed or chmod-ed
//     — Landlock governs opening, not stat, chmod or utime;
//   - when the server is root, each directory above one the command needs
//     (its workspace, temp dir, read and write paths) that the commands'
//     unprivileged uid may not search — /root, any `mktemp -d`, a home
//     directory — is covered the same way: the uid could reach nothing
//     below it anyway, so the cover hides nothing it could see;
//   - each needed directory beneath a cover is put back at its own path:
//     when the server is root, from a detached copy of its mount that the
//     server (which can walk the host path) made with open_tree and sent
//     over the socket, so the uid never walks the host path; otherwise
//     (the commands act as the server's own uid, which can walk it) opened
//     by path in the new namespace before the covers.
//
// The user's directories keep their permissions, and the commands still
// act as the unprivileged uid: Landlock's rules are on the directories'
// inodes, which the bound copies share, and a 0600 root file stays 0600.

// viewOp is one step of building the view, applied in order.
type viewOp struct {
	kind byte
	path string
}

// viewOp kinds.
const (
	// viewCover mounts an empty tmpfs over path.
	viewCover byte = 'c'
	// viewCoverIfExists is viewCover, skipped when path does not exist
	// (a private directory not made yet has nothing to hide).
	viewCoverIfExists byte = 'p'
	// viewBindFD attaches the request's next view descriptor, a detached
	// mount (open_tree), at path.
	viewBindFD byte = 'm'
	// viewBindPath binds path, as found in the command's namespace before
	// any cover, back at path.
	viewBindPath byte = 'b'
)

// viewTarget is a directory the plan must place: one the command needs,
// or a private one it must see empty.
type viewTarget struct {
	path    string
	private bool
}

// planView returns the steps that give a command the view of needed and
// private directories (absolute, symlinks resolved). blocked says whether
// the commands' uid may not search a directory (nil: it may search every
// one the server can); bind is the kind of step that puts a needed
// directory back beneath a cover.
//
// Targets are placed shallowest first, so a step always comes after every
// step on a directory above it. Walking down to a target, a directory
// already covered, or one the uid may not search (covered now), starts a
// stretch the command sees empty; a needed directory put back ends it.
func planView(needed, private []string, blocked func(string) bool, bind byte) []viewOp {
	targets := make([]viewTarget, 0, len(needed)+len(private))
	seen := map[string]bool{}
	for _, p := range private {
		if p != "" && p != "/" && !seen[p] {
			seen[p] = true
			targets = append(targets, viewTarget{path: p, private: true})
		}
	}
	for _, p := range needed {
		if p != "" && p != "/" && !seen[p] { // a private directory stays private
			seen[p] = true
			targets = append(targets, viewTarget{path: p})
		}
	}
	sort.SliceStable(targets, func(i, j int) bool {
		di, dj := strings.Count(targets[i].path, "/"), strings.Count(targets[j].path, "/")
		if di != dj {
			return di < dj
		}
		return targets[i].path < targets[j].path
	})
	var ops []viewOp
	covered, bound := map[string]bool{}, map[string]bool{}
	for _, t := range targets {
		visible := true
		for _, x := range ancestors(t.path) {
			switch {
			case bound[x]:
				visible = true
			case !visible:
			case covered[x]:
				visible = false
			case blocked != nil && blocked(x):
				ops = append(ops, viewOp{viewCover, x})
				covered[x] = true
				visible = false
			}
		}
		switch {
		case t.private && visible:
			ops = append(ops, viewOp{viewCoverIfExists, t.path})
			covered[t.path] = true
		case !t.private && !visible:
			ops = append(ops, viewOp{bind, t.path})
			bound[t.path] = true
		}
	}
	return ops
}

// ancestors lists the directories above the absolute path p, from the
// first below / down to p's parent.
func ancestors(p string) []string {
	var out []string
	for i := 1; i < len(p); i++ {
		if p[i] == '/' {
			out = append(out, p[:i])
		}
	}
	return out
}

// searchable reports whether uid and gid, with no supplementary groups
// (the commands have none), may search a directory of mode, owner and
// group as the kernel's permission bits decide.
func searchable(st *unix.Stat_t, uid, gid int) bool {
	switch {
	case int(st.Uid) == uid:
		return st.Mode&0o100 != 0
	case int(st.Gid) == gid:
		return st.Mode&0o010 != 0
	}
	return st.Mode&0o001 != 0
}

// blockedFor is the blocked test of planView for a root server's
// commands. Each directory is stat-ed once and remembered (it lies above
// a workspace, a temp dir or a read path: a handful of stable
// directories), so planning costs no system call on a call's path once
// warm. A directory made unsearchable after it was remembered keeps
// commands out of what lies below it until the server restarts; one made
// searchable only costs a needless cover.
func (s *Sandbox) blockedFor(dir string) bool {
	if v, ok := s.searchCache.Load(dir); ok {
		return v.(bool)
	}
	var st unix.Stat_t
	if unix.Stat(dir, &st) != nil {
		return false // nothing there yet: whatever is below is skipped (view)
	}
	blocked := !searchable(&st, s.uid, s.gid)
	if s.searchCacheN.Add(1) <= maxSearchCache {
		s.searchCache.Store(dir, blocked)
	}
	return blocked
}

// maxSearchCache bounds blockedFor's memory should directories above the
// needed ones vary without end (they do not in any config seen so far).
const maxSearchCache = 4096

// absDirs cleans the absolute paths of ps and drops the rest. Symlinks are
// not resolved: a mount's target follows them as a path walk does, so a
// directory is attached where the command will look for it.
func absDirs(ps []string) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		if filepath.IsAbs(p) {
			out = append(out, filepath.Clean(p))
		}
	}
	return out
}

// skipMissing drops the step at i, whose directory does not exist, and
// every later step beneath it, which had nothing to stand on.
func skipMissing(ops []viewOp, i int) []viewOp {
	gone := ops[i].path + "/"
	out := append([]viewOp(nil), ops[:i]...)
	for _, op := range ops[i+1:] {
		if !strings.HasPrefix(op.path, gone) {
			out = append(out, op)
		}
	}
	return out
}

// neededDirs are the directories a command under p uses.
func neededDirs(p *Policy) []string {
	dirs := make([]string, 0, 2+len(p.WritePaths)+len(p.ReadPaths))
	dirs = append(append(append(dirs, p.Workspace, p.TempDir), p.WritePaths...), p.ReadPaths...)
	return absDirs(dirs)
}

// view plans p's view for a command started through the helper and adds
// it to the request, with the detached mounts its steps attach. Nothing is
// added when the command needs no view.
func (s *Sandbox) view(f *sendFiles, p *Policy, req *startRequest) error {
	private := absDirs(p.Private)
	var ops []viewOp
	if s.mapped && s.viewErr == nil {
		ops = planView(neededDirs(p), private, s.blockedFor, viewBindFD)
	} else if len(private) > 0 {
		// The commands act as the server's own uid (or the kernel
		// cannot copy a mount): the workspace is bound back from the
		// command's namespace, as that uid can walk to it.
		ops = planView(absDirs([]string{p.Workspace}), private, nil, viewBindPath)
	}
	for i := 0; i < len(ops); i++ {
		op := ops[i]
		if op.kind != viewBindFD {
			continue
		}
		fd, err := unix.OpenTree(unix.AT_FDCWD, op.path, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
		if errors.Is(err, unix.ENOENT) { // a write path not made: skipped, as Landlock skips it
			ops = skipMissing(ops, i)
			i--
			continue
		}
		if err != nil {
			return fmt.Errorf("sandbox: copying the mount of %s for the command: %w", op.path, err)
		}
		f.sent = append(f.sent, os.NewFile(uintptr(fd), "sandbox-view"))
		f.fds = append(f.fds, fd)
	}
	if len(ops) == 0 {
		return nil
	}
	req.view = ops
	req.flags |= reqView
	req.unshare |= unix.CLONE_NEWNS
	return nil
}

// probeView checks that the kernel lets a root server copy a mount for a
// command's view (open_tree, Linux 5.2); without it directories beneath
// one the commands' uid cannot search stay out of their reach.
func probeView() error {
	fd, err := unix.OpenTree(unix.AT_FDCWD, "/", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return err
	}
	return unix.Close(fd)
}

// applyView runs on the helper thread that forks a command, in the mount
// namespace it just entered: it takes the steps of ops in order, with
// fds the detached mounts of the viewBindFD steps, in order.
func applyView(ops []viewOp, fds []int) error {
	// Opened before any cover, in this namespace: a bind mount's source
	// must be a mount of the caller's namespace.
	byPath := make([]int, len(ops))
	for i, op := range ops {
		byPath[i] = -1
		if op.kind != viewBindPath {
			continue
		}
		fd, err := unix.Open(op.path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) {
			continue // not made: skipped below, with what lies beneath
		}
		if err != nil {
			closeAll(byPath[:i])
			return errors.New(op.path + ": " + err.Error())
		}
		byPath[i] = fd
	}
	defer func() {
		for _, fd := range byPath {
			if fd >= 0 {
				unix.Close(fd)
			}
		}
	}()
	next := 0
	missing := "\x00" // the path of a bind skipped as missing, with "/"
	for i, op := range ops {
		if strings.HasPrefix(op.path, missing) {
			continue
		}
		var err error
		switch op.kind {
		case viewCover, viewCoverIfExists:
			err = unix.Mount("toolnexus-private", op.path, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0711,size=64k,nr_inodes=256")
			if op.kind == viewCoverIfExists && errors.Is(err, unix.ENOENT) {
				err = nil // not made yet: nothing to hide
			}
		case viewBindFD:
			if next >= len(fds) {
				return errors.New("sandbox: the request's view descriptors do not match")
			}
			if err = os.MkdirAll(op.path, 0o711); err == nil {
				err = unix.MoveMount(fds[next], "", unix.AT_FDCWD, op.path, unix.MOVE_MOUNT_F_EMPTY_PATH)
			}
			next++
		case viewBindPath:
			if byPath[i] < 0 {
				missing = op.path + "/"
				continue
			}
			if err = os.MkdirAll(op.path, 0o711); err == nil {
				err = unix.Mount("/proc/self/fd/"+strconv.Itoa(byPath[i]), op.path, "", unix.MS_BIND|unix.MS_REC, "")
			}
		default:
			err = errors.New("unknown step")
		}
		if err != nil {
			return errors.New(op.path + ": " + err.Error())
		}
	}
	if next != len(fds) {
		return errors.New("sandbox: the request's view descriptors do not match")
	}
	return nil
}

// directView is the view of a command a root server starts itself, with
// no helper (no user or PID namespace): the same covers, with the needed
// directories bound back by path, as root can walk to them. Nil when
// there is nothing to do or the server cannot make a mount namespace.
func (s *Sandbox) directView(p *Policy) []viewOp {
	if !s.mapped || s.viewErr != nil {
		return nil
	}
	return planView(neededDirs(p), absDirs(p.Private), s.blockedFor, viewBindPath)
}

// enterDirectView gives the calling, locked thread of a root server a
// mount namespace of its own with the view of ops, which the command it
// forks inherits. The copy of the host's mounts is made a slave first, so
// no mount here propagates back to the host.
func enterDirectView(ops []viewOp) error {
	if len(ops) == 0 {
		return nil
	}
	if err := unix.Unshare(unix.CLONE_FS | unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("sandbox: mount namespace: %w", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_SLAVE, ""); err != nil {
		return fmt.Errorf("sandbox: mount namespace: %w", err)
	}
	if err := applyView(ops, nil); err != nil {
		return errors.New("sandbox: the command's view of the filesystem: " + err.Error())
	}
	return nil
}

// probeDirectView checks that a root server without a helper can make a
// mount namespace (it needs CAP_SYS_ADMIN, which a container may withhold),
// on a throwaway locked thread.
func probeDirectView() error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		err := unix.Unshare(unix.CLONE_FS | unix.CLONE_NEWNS)
		if err == nil {
			err = unix.Mount("", "/", "", unix.MS_REC|unix.MS_SLAVE, "")
		}
		done <- err
	}()
	return <-done
}

// Unreachable says why the sandbox's commands cannot use dir (a
// workspace, the sessions' root, a read path), naming the directory in
// the way and the fix; nil when they can. Only a root server's commands,
// which act as an unprivileged uid, can be kept out of a directory the
// server reaches: when a directory above dir is not searchable by that
// uid and the sandbox cannot give the commands a view of dir (no mount
// namespace to make one in). The server says so at start and in --check.
func (s *Sandbox) Unreachable(dir string) error {
	if !s.On() || !s.mapped || s.viewErr == nil || dir == "" {
		return nil
	}
	real := filepath.Clean(dir)
	for { // the nearest existing directory: the server makes the rest
		if r, err := filepath.EvalSymlinks(real); err == nil {
			real = r
			break
		}
		if real == "/" || real == "." {
			return nil
		}
		real = filepath.Dir(real)
	}
	for _, x := range append(ancestors(real), real) {
		var st unix.Stat_t
		if unix.Stat(x, &st) != nil || searchable(&st, s.uid, s.gid) {
			continue
		}
		return fmt.Errorf("%s: the sandbox's commands act as uid %d, which cannot search %s (mode %04o, owner uid %d), "+
			"and this sandbox cannot mount %s into their view (%v); bash and sandboxed MCP servers cannot use it. "+
			"Fix: put it under a directory uid %d can search (e.g. /srv or /var/lib), or run the server where it may make "+
			"user and mount namespaces (a container needs CAP_SYS_ADMIN or a seccomp profile that allows them), "+
			"or set sandbox.uid to an id that may search %s",
			dir, s.uid, x, st.Mode&0o7777, st.Uid, dir, s.viewErr, s.uid, x)
	}
	return nil
}

// MountView is the name DisableForTest takes to play a root server that
// cannot give its commands a view of the filesystem (no mount namespace
// it may make), as in a container without CAP_SYS_ADMIN.
const MountView = "mount-view"
