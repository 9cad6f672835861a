package builtin

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"syscall"

	"github.com/toolnexus/toolnexus/pkg/sources/builtin/internal/glob"
	"github.com/toolnexus/toolnexus/pkg/tool"
	"golang.org/x/sys/unix"
)

const (
	// DefaultSearchLimit is grep's and glob's limit when the call gives none.
	DefaultSearchLimit = 100
	// maxGrepLine is the longest line grep looks at; the rest of a longer
	// line is ignored (minified files, data dumps).
	maxGrepLine = 1 << 20
	// binarySniff is how much of a file grep inspects for a NUL byte
	// before deciding it is binary and skipping it.
	binarySniff = 8 << 10
)

// skipDir reports the directories every search leaves out.
func skipDir(name string) bool { return name == ".git" || name == "node_modules" }

type grepArgs struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
	Include string `json:"include"`
	Limit   *int   `json:"limit"`
}

func (t *toolset) grep(ctx context.Context, c tool.Call) tool.Result {
	var a grepArgs
	if r := decodeArgs("grep", c, &a); r != nil {
		return *r
	}
	if a.Pattern == "" {
		return *invalid("grep: pattern is required")
	}
	limit, r := searchLimit("grep", a.Limit)
	if r != nil {
		return *r
	}
	re, err := regexp.Compile(a.Pattern)
	if err != nil {
		return fail("grep: invalid regex: %s", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	var include *glob.Pattern
	if a.Include != "" {
		if include, err = glob.Compile(a.Include); err != nil {
			return fail("grep: invalid include pattern: %s", a.Include)
		}
	}
	base, res := t.searchBase("grep", a.Path)
	if res != nil {
		return *res
	}

	var lines []string
	more := false
	err = t.walkFiles(ctx, base, func(rel string, open func() (*os.File, error)) error {
		if include != nil && !include.Match(relTo(base, rel)) {
			return nil
		}
		return grepFile(open, rel, re, func(line string) bool {
			if len(lines) == limit {
				more = true
				return false
			}
			lines = append(lines, line)
			return true
		})
	})
	if errors.Is(err, errStopWalk) {
		err = nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return tool.ContextResult(ctx, "grep")
		}
		return fail("grep: %v", err)
	}
	return searchResult(lines, more, t.cap)
}

var errStopWalk = errors.New("stop walk")

// grepFile emits FILE:LINE:TEXT for each matching line until emit says stop.
// Binary files (a NUL byte near the start) and unreadable files are skipped.
func grepFile(open func() (*os.File, error), rel string, re *regexp.Regexp, emit func(string) bool) error {
	f, err := open()
	if err != nil {
		return nil
	}
	defer f.Close()
	// Checked on the open file: a FIFO swapped in since the directory was
	// read must not hold the search.
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	br := bufio.NewReaderSize(f, 64<<10)
	if head, _ := br.Peek(binarySniff); bytes.IndexByte(head, 0) >= 0 {
		return nil
	}
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 0, 64<<10), maxGrepLine)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSuffix(sc.Bytes(), []byte("\r"))
		if !re.Match(line) {
			continue
		}
		if !emit(fmt.Sprintf("%s:%d:%s", rel, n, line)) {
			return errStopWalk
		}
	}
	// A line beyond maxGrepLine ends the scan of this file: what was found
	// so far stands.
	return nil
}

type globArgs struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
	Limit   *int   `json:"limit"`
}

func (t *toolset) glob(ctx context.Context, c tool.Call) tool.Result {
	var a globArgs
	if r := decodeArgs("glob", c, &a); r != nil {
		return *r
	}
	if a.Pattern == "" {
		return *invalid("glob: pattern is required")
	}
	limit, r := searchLimit("glob", a.Limit)
	if r != nil {
		return *r
	}
	g, err := glob.Compile(a.Pattern)
	if err != nil {
		return fail("glob: invalid pattern: %s", a.Pattern)
	}
	base, res := t.searchBase("glob", a.Path)
	if res != nil {
		return *res
	}
	var found []string
	err = t.walkFiles(ctx, base, func(rel string, _ func() (*os.File, error)) error {
		if g.Match(relTo(base, rel)) {
			found = append(found, rel)
		}
		if len(found) > limit {
			return errStopWalk // one past the limit says there is more
		}
		return nil
	})
	if errors.Is(err, errStopWalk) {
		err = nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return tool.ContextResult(ctx, "glob")
		}
		return fail("glob: %v", err)
	}
	more := len(found) > limit
	if more {
		found = found[:limit]
	}
	return searchResult(found, more, t.cap)
}

func searchLimit(name string, limit *int) (int, *tool.Result) {
	if limit == nil {
		return DefaultSearchLimit, nil
	}
	if *limit < 1 {
		return 0, invalid(name + ": limit must be >= 1")
	}
	return *limit, nil
}

// searchBase resolves the path argument (default: the root) to a path
// beneath the root and checks it exists.
func (t *toolset) searchBase(name, p string) (string, *tool.Result) {
	base := "."
	if p != "" {
		var r *tool.Result
		if _, base, r = t.at(name, p); r != nil {
			return "", r
		}
	}
	root, err := t.ws.Dir()
	if err == nil {
		_, err = root.Stat(base)
	}
	if err != nil {
		if escapedRoot(err) {
			r := escaped("%s: path escapes the workspace: %s", name, p)
			return "", &r
		}
		r := fail("%s: path not found: %s", name, p)
		return "", &r
	}
	return base, nil
}

func searchResult(lines []string, more bool, max int) tool.Result {
	out, truncated := capText(strings.Join(lines, "\n"), max)
	meta := map[string]any{"count": len(lines)}
	if more || truncated {
		meta["truncated"] = true
	}
	return tool.Success(out, meta)
}

// walkFiles calls fn for every file under base (or base itself when it is
// a file; base is relative to the workspace root) with its path relative
// to the root and a function that opens it, in byte order of those paths,
// so that a search can stop at its limit and still return the first
// matches. It skips .git and node_modules below base, does not descend
// into symlinked directories, and passes a symlinked file only when its
// target is a regular file inside the workspace: a link must not let a
// search read what the file tools may not.
//
// The walk holds each directory open and reaches its entries through that
// descriptor (openat with O_NOFOLLOW), so a directory swapped for a
// symlink while the walk runs is skipped, never followed; symlinked files
// are opened through the workspace's os.Root, which cannot leave it.
func (t *toolset) walkFiles(ctx context.Context, base string, fn func(rel string, open func() (*os.File, error)) error) error {
	root, err := t.ws.Dir()
	if err != nil {
		return err
	}
	f, err := root.OpenFile(base, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		if !fi.Mode().IsRegular() {
			return nil
		}
		return fn(base, func() (*os.File, error) { return root.OpenFile(base, os.O_RDONLY|syscall.O_NONBLOCK, 0) })
	}
	return t.walkDir(ctx, root, f, base, fn)
}

func (t *toolset) walkDir(ctx context.Context, root *os.Root, dir *os.File, rel string, fn func(rel string, open func() (*os.File, error)) error) error {
	entries, err := dir.ReadDir(-1)
	if err != nil {
		return err
	}
	// Ordering a directory "x" as "x/" puts everything below it where its
	// full paths sort: after "x.txt", before "xa".
	key := func(e fs.DirEntry) string {
		if e.IsDir() {
			return e.Name() + "/"
		}
		return e.Name()
	}
	sort.Slice(entries, func(i, j int) bool { return key(entries[i]) < key(entries[j]) })
	dirfd := int(dir.Fd())
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		name := e.Name()
		child := path.Join(rel, name)
		var open func() (*os.File, error)
		switch {
		case e.IsDir():
			if skipDir(name) || t.hiddenFromShared(filepath.Join(t.ws.Root(), child)) {
				continue
			}
			sub, err := openAt(dirfd, name, unix.O_DIRECTORY, child)
			if err != nil {
				continue // unreadable, or swapped for a link: skipped, not fatal
			}
			err = t.walkDir(ctx, root, sub, child, fn)
			sub.Close()
			if err != nil {
				return err
			}
			continue
		case e.Type()&fs.ModeSymlink != 0:
			// Followed only through the root, and only to a regular file.
			fi, err := root.Stat(child)
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			open = func() (*os.File, error) { return root.OpenFile(child, os.O_RDONLY|syscall.O_NONBLOCK, 0) }
		case !e.Type().IsRegular():
			continue
		default:
			open = func() (*os.File, error) { return openAt(dirfd, name, unix.O_NONBLOCK, child) }
		}
		if err := fn(child, open); err != nil {
			return err
		}
	}
	runtime.KeepAlive(dir)
	return nil
}

// openAt opens name in the directory dirfd without following a symlink.
func openAt(dirfd int, name string, flags int, display string) (*os.File, error) {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|flags, 0)
	if err != nil {
		return nil, &os.PathError{Op: "openat", Path: display, Err: err}
	}
	return os.NewFile(uintptr(fd), display), nil
}

// relTo is rel (beneath the root) relative to base with forward slashes;
// base itself (a search of one file) gives its base name.
func relTo(base, rel string) string {
	switch {
	case rel == base:
		return path.Base(rel)
	case base == ".":
		return rel
	}
	return strings.TrimPrefix(rel, base+"/")
}
