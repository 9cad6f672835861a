package builtin

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

type readArgs struct {
	Path   string `json:"path"`
	Offset *int   `json:"offset"`
	Limit  *int   `json:"limit"`
}

func (t *toolset) read(_ context.Context, c tool.Call) tool.Result {
	var a readArgs
	if r := decodeArgs("read", c, &a); r != nil {
		return *r
	}
	if a.Path == "" {
		return *invalid("read: path is required")
	}
	if a.Offset != nil && *a.Offset < 1 {
		return *invalid("read: offset must be a line number >= 1")
	}
	if a.Limit != nil && *a.Limit < 1 {
		return *invalid("read: limit must be a number of lines >= 1")
	}
	root, rel, r := t.at("read", a.Path)
	if r != nil {
		return *r
	}
	f, size, r := openRegular(root, "read", a.Path, rel)
	if r != nil {
		return *r
	}
	defer f.Close()
	var err error
	// The file is streamed into a capped buffer: a huge file costs the
	// output cap, not its size.
	w := newCapWriterHint(t.cap, size)
	if a.Offset != nil || a.Limit != nil {
		first, last := 1, -1
		if a.Offset != nil {
			first = *a.Offset
		}
		if a.Limit != nil && *a.Limit <= math.MaxInt-first {
			last = first + *a.Limit - 1
		}
		err = lineWindow(w, f, first, last)
	} else {
		_, err = io.Copy(w, f)
	}
	if err != nil {
		return fileError("read", a.Path, err)
	}
	out, truncated := w.Text()
	if truncated {
		return tool.Success(out, map[string]any{"truncated": true})
	}
	return tool.Success(out, nil)
}

// lineWindow writes lines first..last (1-based; last < 0 means to the end)
// of r to w, joined by "\n". A final newline ends the last line rather than
// starting an empty one. Lines longer than the read buffer pass through in
// pieces, and reading stops after the window.
func lineWindow(w io.Writer, r io.Reader, first, last int) error {
	br := bufio.NewReader(r)
	n := 1
	atLineStart := true
	for last < 0 || n <= last {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			complete := chunk[len(chunk)-1] == '\n'
			if complete {
				chunk = chunk[:len(chunk)-1]
			}
			if n >= first {
				if atLineStart && n > first {
					_, _ = w.Write(newline)
				}
				_, _ = w.Write(chunk)
			}
			atLineStart = complete
			if complete {
				n++
			}
		}
		switch {
		case err == nil, errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF):
			return nil
		default:
			return err
		}
	}
	return nil
}

var newline = []byte("\n")

type writeArgs struct {
	Path    string  `json:"path"`
	Content *string `json:"content"`
}

func (t *toolset) write(_ context.Context, c tool.Call) tool.Result {
	var a writeArgs
	if r := decodeArgs("write", c, &a); r != nil {
		return *r
	}
	if a.Path == "" {
		return *invalid("write: path is required")
	}
	if a.Content == nil {
		return *invalid("write: content is required")
	}
	root, rel, r := t.at("write", a.Path)
	if r != nil {
		return *r
	}
	if fi, err := root.Stat(rel); err == nil && fi.IsDir() {
		return fail("write: %s is a directory", a.Path)
	}
	if r := t.grow("write", fileGrowth(root, rel, len(*a.Content))); r != nil {
		return *r
	}
	own := t.owner()
	made, err := mkdirAllTracked(root, path.Dir(rel))
	if err == nil {
		err = own.dirs(root, made)
	}
	if err != nil {
		return rootFail("write", a.Path, "cannot create the parent directory of %s: %s", err)
	}
	if err := writeFileAtomic(root, rel, []byte(*a.Content), own); err != nil {
		return rootFail("write", a.Path, "cannot write %s: %s", err)
	}
	n := len(*a.Content)
	return tool.Success(fmt.Sprintf("Wrote %d bytes to %s", n, a.Path), map[string]any{"bytes": n})
}

type editArgs struct {
	Path       string  `json:"path"`
	OldString  *string `json:"oldString"`
	NewString  *string `json:"newString"`
	ReplaceAll bool    `json:"replaceAll"`
}

func (t *toolset) edit(_ context.Context, c tool.Call) tool.Result {
	var a editArgs
	if r := decodeArgs("edit", c, &a); r != nil {
		return *r
	}
	switch {
	case a.Path == "":
		return *invalid("edit: path is required")
	case a.OldString == nil:
		return *invalid("edit: oldString is required")
	case a.NewString == nil:
		return *invalid("edit: newString is required")
	case *a.OldString == "":
		return *invalid("edit: oldString must not be empty; use write to create a file")
	}
	root, rel, r := t.at("edit", a.Path)
	if r != nil {
		return *r
	}
	f, _, r := openRegular(root, "edit", a.Path, rel)
	if r != nil {
		return *r
	}
	data, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		return fileError("edit", a.Path, err)
	}
	text := string(data)
	n := strings.Count(text, *a.OldString)
	switch {
	case n == 0:
		return fail("edit: oldString not found in %s", a.Path)
	case n > 1 && !a.ReplaceAll:
		return fail("edit: oldString is not unique in %s (%d occurrences); use replaceAll", a.Path, n)
	}
	text = strings.Replace(text, *a.OldString, *a.NewString, -1)
	if r := t.grow("edit", int64(len(text)-len(data))); r != nil {
		return *r
	}
	if err := writeFileAtomic(root, rel, []byte(text), t.owner()); err != nil {
		return rootFail("edit", a.Path, "cannot write %s: %s", err)
	}
	unit := "replacements"
	if n == 1 {
		unit = "replacement"
	}
	return tool.Success(fmt.Sprintf("Edited %s (%d %s)", a.Path, n, unit), map[string]any{"replacements": n})
}

// at resolves a path argument for a file tool: the workspace's opened root
// and the path relative to it. The failure names the tool and the path
// as the model wrote it.
func (t *toolset) at(name, p string) (*os.Root, string, *tool.Result) {
	real, r := t.resolve(name, p)
	if r != nil {
		return nil, "", r
	}
	root, err := t.ws.Dir()
	if err != nil {
		r := fail("%s: the workspace cannot be opened: %s", name, osReason(err))
		return nil, "", &r
	}
	return root, t.ws.relOf(real), nil
}

// openRegular opens rel beneath root for reading and fails unless it is a
// regular file: a FIFO or a device would block or never end, whatever the
// caller's deadline. The file is opened first (non-blocking, so a FIFO
// cannot hold the call) and then checked, so what is checked is what is
// read. It returns the file's size.
func openRegular(root *os.Root, name, path, rel string) (*os.File, int64, *tool.Result) {
	f, err := root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		r := rootFail(name, path, "cannot read %s: %s", err)
		if errors.Is(err, fs.ErrNotExist) {
			r = fileError(name, path, err)
		}
		return nil, 0, &r
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		r := fileError(name, path, err)
		return nil, 0, &r
	}
	switch {
	case fi.IsDir():
		f.Close()
		r := fail("%s: %s is a directory", name, path)
		return nil, 0, &r
	case !fi.Mode().IsRegular():
		f.Close()
		r := fail("%s: %s is not a regular file", name, path)
		return nil, 0, &r
	}
	return f, fi.Size(), nil
}

// rootFail words an error of an os.Root operation on path: a refusal to
// leave the root as the escape it is, anything else with format (which
// takes the path and the reason).
func rootFail(name, path, format string, err error) tool.Result {
	if escapedRoot(err) {
		return escaped("%s: path escapes the workspace: %s", name, path)
	}
	return fail(name+": "+format, path, osReason(err))
}

// fileError words a failed read of path for the model. Paths in os errors
// are the real absolute ones; the model should see the path it gave.
func fileError(name, path string, err error) tool.Result {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fail("%s: file not found: %s", name, path)
	case isDirErr(err):
		return fail("%s: %s is a directory", name, path)
	}
	return fail("%s: cannot read %s: %s", name, path, osReason(err))
}

func isDirErr(err error) bool { return errors.Is(err, syscall.EISDIR) }

// osReason is an os error without the path it carries.
func osReason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err.Error()
	}
	return err.Error()
}

// writeFileAtomic replaces rel's content in one step: the bytes go to a
// temporary file beside it, which is then renamed over rel, both beneath
// root. A reader never sees half a file, and a failed write leaves the old
// content. An existing file keeps its permission bits; the new one
// belongs to own (see fileOwner).
func writeFileAtomic(root *os.Root, rel string, data []byte, own fileOwner) error {
	tmp, err := stageFile(root, rel, data, own)
	if err != nil {
		return err
	}
	if err := root.Rename(tmp, rel); err != nil {
		root.Remove(tmp)
		return err
	}
	return nil
}

// stageFile writes data to a new temporary file in rel's directory, with
// rel's mode (0644 for a new file), and returns its name (relative to
// root), belonging to own.
func stageFile(root *os.Root, rel string, data []byte, own fileOwner) (string, error) {
	mode := fs.FileMode(0o644)
	if fi, err := root.Stat(rel); err == nil {
		mode = fi.Mode().Perm()
	}
	var f *os.File
	var name string
	for range 100 {
		name = path.Join(path.Dir(rel), "."+path.Base(rel)+".toolnexus-"+strconv.FormatUint(rand.Uint64(), 36))
		var err error
		f, err = root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	if f == nil {
		return "", fs.ErrExist
	}
	_, werr := f.Write(data)
	cerr := f.Chmod(mode)
	oerr := own.file(f)
	if err := errors.Join(werr, cerr, oerr, f.Close()); err != nil {
		root.Remove(name)
		return "", err
	}
	return name, nil
}
