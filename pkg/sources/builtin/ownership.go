package builtin

import (
	"os"
)

// fileOwner is who the files and directories the file tools create in a
// workspace must belong to: the sandbox's commands' uid when the server is
// root (they act as an unprivileged uid then, and must still be able to
// change what write, edit and apply_patch made). The zero value changes
// nothing.
type fileOwner struct {
	uid, gid int
	ok       bool
}

func (t *toolset) owner() fileOwner {
	uid, gid, ok := t.sandbox.Owner()
	return fileOwner{uid: uid, gid: gid, ok: ok}
}

// file gives f to the owner, through its descriptor.
func (o fileOwner) file(f *os.File) error {
	if !o.ok {
		return nil
	}
	return f.Chown(o.uid, o.gid)
}

// dirs gives the named directories beneath root to the owner.
func (o fileOwner) dirs(root *os.Root, names []string) error {
	if !o.ok {
		return nil
	}
	for _, d := range names {
		if err := root.Lchown(d, o.uid, o.gid); err != nil {
			return err
		}
	}
	return nil
}
