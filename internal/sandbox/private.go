package sandbox

import (
	"errors"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// hidePrivate runs on the helper thread that forks a command, in the
// mount namespace it just entered (a copy of the host's, owned by the
// helper's user namespace, so nothing here propagates back): each private
// directory is covered by an empty tmpfs, and keep, when it lies beneath
// one, is bound back at its own path. The command then finds no other
// session beneath the sessions' root to stat, chmod or list, whatever its
// uid, while its own workspace keeps its path.
func hidePrivate(private []string, keep string) error {
	// Opened before the cover, in this namespace: a bind mount's source
	// must be a mount of the caller's namespace.
	keepFD := -1
	for _, dir := range private {
		if keep != "" && strings.HasPrefix(keep, dir+"/") {
			fd, err := unix.Open(keep, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != nil {
				return errors.New(keep + ": " + err.Error())
			}
			keepFD = fd
			break
		}
	}
	if keepFD >= 0 {
		defer unix.Close(keepFD)
	}
	for _, dir := range private {
		err := unix.Mount("toolnexus-private", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "mode=0711,size=64k,nr_inodes=256")
		if os.IsNotExist(err) {
			continue // not made yet: nothing to hide
		}
		if err != nil {
			return errors.New(dir + ": " + err.Error())
		}
		if keepFD < 0 || !strings.HasPrefix(keep, dir+"/") {
			continue
		}
		if err := os.MkdirAll(keep, 0o711); err != nil {
			return err
		}
		src := "/proc/self/fd/" + strconv.Itoa(keepFD)
		if err := unix.Mount(src, keep, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return err
		}
	}
	return nil
}
