package builtin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
)

// ErrEscapes is wrapped by Workspace.Resolve when a path would leave the
// workspace root.
var ErrEscapes = errors.New("path escapes the workspace")

// maxSymlinkHops bounds symlink chains so that a loop is an error, not a hang
// (the kernel's own limit is 40).
const maxSymlinkHops = 40

// Workspace confines paths to one root directory. Every builtin file tool
// resolves its path arguments through the same Workspace, so the rule is
// enforced in exactly one place.
//
// Resolve follows symlinks itself, one component at a time, so a path whose
// last components do not exist yet (a file about to be written) is judged by
// where it would really land, and a dangling symlink that points out is
// refused just like a live one. That judgement words the refusal; the
// tools then open what Resolve named through Dir, an os.Root, which the
// kernel keeps beneath the root even if a symlink is swapped in between.
// A Workspace is safe for concurrent use.
type Workspace struct {
	root string // absolute and clean, as configured
	real string // root with symlinks resolved (equal to root if it has none)
	dir  atomic.Pointer[os.Root]
}

// NewWorkspace makes a Workspace rooted at dir, which must be an absolute
// path. The directory need not exist yet; when it does, symlinks in it are
// resolved once here, not on every call.
func NewWorkspace(dir string) (*Workspace, error) {
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("workspace %q must be an absolute path; resolve it against the config directory first", dir)
	}
	root := filepath.Clean(dir)
	real, err := realPath(root)
	if err != nil {
		return nil, fmt.Errorf("workspace %s: %w", root, err)
	}
	return &Workspace{root: root, real: real}, nil
}

// Root is the workspace directory with symlinks resolved; paths that Resolve
// returns are inside it.
func (w *Workspace) Root() string { return w.real }

// Resolve maps a path argument to the real absolute path it names. A
// relative path is taken against the root; an absolute path must already be
// inside it (either spelling of the root is accepted). The result has every
// existing symlink resolved and is inside Root, or the error wraps
// ErrEscapes.
func (w *Workspace) Resolve(p string) (string, error) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", fmt.Errorf("path contains a NUL byte")
	}
	// The part below the root is all that needs resolving: the root's own
	// real path is known.
	var rel string
	if filepath.IsAbs(p) {
		lexical := filepath.Clean(p)
		switch {
		case within(lexical, w.real):
			rel = strings.TrimPrefix(lexical, w.real)
		case within(lexical, w.root):
			rel = strings.TrimPrefix(lexical, w.root)
		default:
			return "", ErrEscapes
		}
	} else {
		rel = filepath.Clean(p)
		if rel == ".." || strings.HasPrefix(rel, "../") {
			return "", ErrEscapes
		}
	}
	real, err := resolveFrom(w.real, rel)
	if err != nil {
		return "", err
	}
	if !within(real, w.real) {
		return "", ErrEscapes
	}
	return real, nil
}

// Rel renders a real path inside the workspace relative to the root, with
// forward slashes, as the tools print it.
func (w *Workspace) Rel(real string) string {
	rel, err := filepath.Rel(w.real, real)
	if err != nil {
		return real
	}
	return filepath.ToSlash(rel)
}

// within reports whether p is dir or below it; both are absolute and clean.
func within(p, dir string) bool {
	if p == dir || dir == "/" {
		return true
	}
	return strings.HasPrefix(p, dir) && p[len(dir)] == '/'
}

var errSymlinkLoop = errors.New("too many levels of symbolic links")

// realPath resolves every symlink in the absolute, clean path p, component by
// component. Unlike filepath.EvalSymlinks it tolerates a missing tail: once a
// component does not exist, nothing below it can be a symlink, so the rest is
// joined lexically. A dangling symlink is followed to where it points.
func realPath(p string) (string, error) { return resolveFrom("/", p) }

// resolveFrom is realPath for the path rel below the real directory start.
func resolveFrom(start, rel string) (string, error) {
	resolved := start
	rest := strings.Split(rel, "/")
	hops := 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, c)
		fi, err := os.Lstat(next)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				return filepath.Join(append([]string{next}, rest...)...), nil
			}
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		hops++
		if hops > maxSymlinkHops {
			return "", errSymlinkLoop
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			resolved = "/"
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	return resolved, nil
}

// Dir is the root opened as an os.Root, once: the file tools open, create,
// rename and walk every path through it, so a path that a symlink swapped
// in after Resolve looked at can still never lead out of the root (the
// kernel walks each component beneath the root's descriptor).
func (w *Workspace) Dir() (*os.Root, error) {
	if d := w.dir.Load(); d != nil {
		return d, nil
	}
	d, err := os.OpenRoot(w.real)
	if errors.Is(err, fs.ErrNotExist) {
		// A workspace is created on first use, as a write into a
		// missing directory creates it.
		if err = os.MkdirAll(w.real, 0o755); err == nil {
			d, err = os.OpenRoot(w.real)
		}
	}
	if err != nil {
		return nil, err
	}
	if !w.dir.CompareAndSwap(nil, d) {
		d.Close()
	}
	return w.dir.Load(), nil
}

// Close releases the opened root; a closed Workspace opens it again when
// used.
func (w *Workspace) Close() error {
	if d := w.dir.Swap(nil); d != nil {
		return d.Close()
	}
	return nil
}

// relOf is real (a path Resolve returned) relative to the root, as the
// os.Root methods take it.
func (w *Workspace) relOf(real string) string {
	rel := strings.TrimPrefix(strings.TrimPrefix(real, w.real), "/")
	if rel == "" {
		return "."
	}
	return rel
}

// escapedRoot reports an os.Root refusal: the path, as the kernel walked
// it, led out of the root (a symlink swapped in, or "..").
func escapedRoot(err error) bool {
	return err != nil && strings.Contains(err.Error(), "path escapes from parent")
}
