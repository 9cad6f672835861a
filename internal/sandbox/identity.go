package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// DefaultCommandID is the host uid and gid a root server's commands run
// as: nobody on most systems, an id that owns no file the server needs.
const DefaultCommandID = 65534

// commandIDs decides as which host ids commands act. A root server maps
// them to an unprivileged id: acting as root on the host, a command would
// own every root-owned file it can see — chmod, utime and user.* xattrs
// are not Landlock-controlled, so `chmod 4755` on a root binary would hand
// root to any host user, and 0600 root files would be readable. A non-root
// server can map only its own uid, so its commands act as the server's uid
// and the seccomp filter refuses the ownership calls instead (seccomp.go).
func commandIDs(id CommandID) (uid, gid int, mapped bool) {
	if os.Geteuid() != 0 {
		return os.Geteuid(), os.Getegid(), false
	}
	uid, gid = id.UID, id.GID
	if uid <= 0 {
		uid = DefaultCommandID
	}
	if gid <= 0 {
		gid = DefaultCommandID
	}
	return uid, gid, true
}

// CommandID is the host uid and gid a root server's commands act as
// (sandbox.uid, sandbox.gid); zero means DefaultCommandID. A non-root
// server's commands act as its own ids whatever this says.
type CommandID struct{ UID, GID int }

// Owner reports the host uid and gid the sandbox's commands act as when
// they differ from the server's (the server runs as root); ok is false
// otherwise. The server's file tools give the files they create in a
// workspace to this owner, so a command can still write them.
func (s *Sandbox) Owner() (uid, gid int, ok bool) {
	if !s.On() || !s.mapped {
		return 0, 0, false
	}
	return s.uid, s.gid, true
}

// Own makes dir (not what is below it) belong to the commands' owner when
// that is not the server, so a command can write in a workspace or temp
// dir the server made. It does not follow a symlink. Without an owner it
// does nothing.
func (s *Sandbox) Own(dir string) error {
	uid, gid, ok := s.Owner()
	if !ok {
		return nil
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if st, isSys := fi.Sys().(*syscall.Stat_t); isSys && int(st.Uid) == uid && int(st.Gid) == gid {
		return nil
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return errors.New("sandbox: " + dir + " is a symlink")
	}
	return os.Lchown(dir, uid, gid)
}

// OwnFile gives an open file the server made in a workspace to the
// commands' owner (see Own); f's descriptor is used, so no path is
// resolved again.
func (s *Sandbox) OwnFile(f *os.File) error {
	uid, gid, ok := s.Owner()
	if !ok {
		return nil
	}
	return f.Chown(uid, gid)
}
