package session

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// Whole-file advisory locks (flock(2)) are what replicas sharing a sessions
// root coordinate with. Linux's NFS client (v4) maps flock onto NFSv4 byte
// range locks held by the server, and CephFS's kernel and FUSE clients
// implement flock cluster-wide, so a lock taken on one node is seen on all.
// A lock belongs to the open file description: two descriptors for the same
// file conflict even inside one process, which is how this replica's
// janitor is kept off its own running calls.

// errLocked: a non-blocking lock is held by someone else.
var errLocked = errors.New("locked")

func lockShared(f *os.File) error    { return flock(f, unix.LOCK_SH) }
func lockExclusive(f *os.File) error { return flock(f, unix.LOCK_EX) }
func unlock(f *os.File) error        { return flock(f, unix.LOCK_UN) }

// tryLockExclusive takes f exclusively or reports errLocked at once.
func tryLockExclusive(f *os.File) error {
	err := flock(f, unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return errLocked
	}
	return err
}

func flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// sameFile reports whether f is still the file at path: a lock file that
// was unlinked (its session removed) while we waited for its lock is a
// lock on nothing, and the caller must start over with a fresh one. The
// path is compared, not only the link count: an NFS client that unlinks a
// file it still has open renames it to .nfsXXXX instead, and its link
// count stays 1.
func sameFile(f *os.File, path string) bool {
	var a, b unix.Stat_t
	if unix.Fstat(int(f.Fd()), &a) != nil || unix.Stat(path, &b) != nil {
		return false
	}
	return a.Dev == b.Dev && a.Ino == b.Ino && a.Nlink > 0
}

// openLocked opens (creating) the lock file at path and locks it with
// lock, retrying while the file it got was replaced under it.
func openLocked(path string, lock func(*os.File) error) (*os.File, error) {
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err
		}
		if err := lock(f); err != nil {
			f.Close()
			return nil, err
		}
		if sameFile(f, path) {
			return f, nil
		}
		f.Close()
	}
}
