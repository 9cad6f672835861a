package builtin

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/toolnexus/toolnexus/pkg/tool"
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
	var include *globPattern
	if a.Include != "" {
		if include, err = compileGlob(a.Include); err != nil {
			return fail("grep: invalid include pattern: %s", a.Include)
		}
	}
	base, res := t.searchBase("grep", a.Path)
	if res != nil {
		return *res
	}

	var lines []string
	more := false
	err = t.walkFiles(ctx, base, func(p, rel string) error {
		if include != nil && !include.match(relTo(base, p)) {
			return nil
		}
		return grepFile(p, rel, re, func(line string) bool {
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
func grepFile(p, rel string, re *regexp.Regexp, emit func(string) bool) error {
	f, err := os.Open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
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
	g, err := compileGlob(a.Pattern)
	if err != nil {
		return fail("glob: invalid pattern: %s", a.Pattern)
	}
	base, res := t.searchBase("glob", a.Path)
	if res != nil {
		return *res
	}
	var found []string
	err = t.walkFiles(ctx, base, func(p, rel string) error {
		if g.match(relTo(base, p)) {
			found = append(found, rel)
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return tool.ContextResult(ctx, "glob")
		}
		return fail("glob: %v", err)
	}
	// The walk is lexical per directory, which is not byte order of whole
	// paths ("a/b" is visited before "a.txt"): sort, then cut.
	sort.Strings(found)
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

// searchBase resolves the path argument (default: the root) and checks it
// exists.
func (t *toolset) searchBase(name, p string) (string, *tool.Result) {
	base := t.ws.Root()
	if p != "" {
		var r *tool.Result
		if base, r = t.resolve(name, p); r != nil {
			return "", r
		}
	}
	if _, err := os.Stat(base); err != nil {
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
// a file) in lexical order, with its real path and its path relative to the
// workspace root. It skips .git and node_modules below base, does not
// descend into symlinked directories, and passes a symlinked file only when
// its target is a regular file inside the workspace: a link must not let a
// search read what the file tools may not.
func (t *toolset) walkFiles(ctx context.Context, base string, fn func(p, rel string) error) error {
	return filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == base {
				return err
			}
			return nil // unreadable entries are skipped, not fatal
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if d.IsDir() {
			if p != base && skipDir(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			real, err := t.ws.Resolve(p)
			if err != nil {
				return nil
			}
			if fi, err := os.Stat(real); err != nil || !fi.Mode().IsRegular() {
				return nil
			}
		} else if !d.Type().IsRegular() {
			return nil
		}
		return fn(p, t.ws.Rel(p))
	})
}

// relTo is p relative to base with forward slashes; base itself (a search
// of one file) gives its base name.
func relTo(base, p string) string {
	if p == base {
		return filepath.Base(p)
	}
	rel, err := filepath.Rel(base, p)
	if err != nil {
		return p
	}
	return filepath.ToSlash(rel)
}
