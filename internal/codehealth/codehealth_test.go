package codehealth_test

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/internal/codehealth"
	"github.com/toolnexus/toolnexus/internal/testutil"
)

// goFile is one non-generated Go file of the repository.
type goFile struct {
	rel string // slash-separated, from the root
	src []byte
}

// skipDir names the directories that hold no code of the project's own:
// generated code (gen/), npm's and git's trees, and hidden ones.
func skipDir(rel, name string) bool {
	return rel == "gen" || name == "node_modules" || name == "vendor" || (strings.HasPrefix(name, ".") && rel != ".")
}

// goFiles walks the repository for its non-generated Go files.
func goFiles(t *testing.T, root string) []goFile {
	t.Helper()
	var out []goFile
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if skipDir(rel, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if generated(src) {
			return nil
		}
		out = append(out, goFile{rel: rel, src: src})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// generated reports the standard "Code generated ... DO NOT EDIT." line.
func generated(src []byte) bool {
	for line := range bytes.Lines(src) {
		line = bytes.TrimSpace(line)
		if bytes.HasPrefix(line, []byte("// Code generated ")) && bytes.HasSuffix(line, []byte(" DO NOT EDIT.")) {
			return true
		}
		if bytes.HasPrefix(line, []byte("package ")) {
			return false
		}
	}
	return false
}

// longFunc is a function over the limit.
type longFunc struct {
	where string
	lines int
}

// longFuncs lists the functions (and methods) of src longer than max
// lines, from their signature to their closing brace.
func longFuncs(fset *token.FileSet, f goFile, max int) ([]longFunc, error) {
	file, err := parser.ParseFile(fset, f.rel, f.src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []longFunc
	for _, decl := range file.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		start, end := fset.Position(fn.Pos()), fset.Position(fn.End())
		if n := end.Line - start.Line + 1; n > max {
			out = append(out, longFunc{where: fmt.Sprintf("%s:%d %s", f.rel, start.Line, funcName(fn)), lines: n})
		}
	}
	return out, nil
}

// funcName is fn's name, with its receiver's type for a method.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	typ := fn.Recv.List[0].Type
	if star, ok := typ.(*ast.StarExpr); ok {
		typ = star.X
	}
	if idx, ok := typ.(*ast.IndexExpr); ok { // a generic receiver
		typ = idx.X
	}
	if id, ok := typ.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}

// TestNoFunctionOverTheLimit: every non-generated function of the
// repository, tests included, is at most codehealth.MaxFuncLines long.
// Split a longer one into steps named for what they do.
func TestNoFunctionOverTheLimit(t *testing.T) {
	root := testutil.RepoRoot(t)
	fset := token.NewFileSet()
	var long []longFunc
	for _, f := range goFiles(t, root) {
		if strings.Contains("/"+f.rel, "/testdata/") {
			continue // inputs of tests, some deliberately broken
		}
		found, err := longFuncs(fset, f, codehealth.MaxFuncLines)
		if err != nil {
			t.Errorf("parsing %v", err)
			continue
		}
		long = append(long, found...)
	}
	slices.SortFunc(long, func(a, b longFunc) int { return b.lines - a.lines })
	for _, l := range long {
		t.Errorf("%s is %d lines long, over the limit of %d: split it into steps named for what they do", l.where, l.lines, codehealth.MaxFuncLines)
	}
}

// TestServerTestShare: pkg/server holds at most
// codehealth.MaxServerTestShare of the repository's non-generated
// *_test.go lines. A test that needs no whole server process (several
// replicas, nginx, Redis, SIGHUP, root, the binary's start-up) belongs to
// the package whose code it exercises, on internal/testutil/inproc.
func TestServerTestShare(t *testing.T) {
	var all, server int
	for _, f := range goFiles(t, testutil.RepoRoot(t)) {
		if !strings.HasSuffix(f.rel, "_test.go") {
			continue
		}
		n := bytes.Count(f.src, []byte("\n"))
		all += n
		if filepath.Dir(f.rel) == "pkg/server" {
			server += n
		}
	}
	if all == 0 {
		t.Fatal("no test files found")
	}
	share := float64(server) / float64(all)
	t.Logf("pkg/server holds %d of %d test lines (%.1f%%)", server, all, 100*share)
	if share > codehealth.MaxServerTestShare {
		t.Errorf("pkg/server holds %d of the repository's %d test lines (%.1f%%), over %.0f%%: move the tests that need no whole server process into the package whose code they exercise (internal/testutil/inproc serves a core over gRPC and /mcp in-process)",
			server, all, 100*share, 100*codehealth.MaxServerTestShare)
	}
}
