package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// block is one fenced code block of a page.
type block struct {
	file string // path relative to the repository root, e.g. docs/deploy.md
	line int    // of the opening fence
	lang string // the info string's first word ("" for none)
	text string
	// marker is the HTML comment on the line right before the fence:
	// kind "illustrative" (not run; arg is the reason), "example" (a
	// worked policy, run by internal/policy/docs_test.go) or "output"
	// (text the server produces; arg names the check comparing it).
	marker, arg string
}

func (b block) String() string { return b.file + ":" + strconv.Itoa(b.line) }

var markerRE = regexp.MustCompile(`^<!--\s*(illustrative|example|output):\s*(.*?)\s*-->$`)

// pages are README.md and every page under docs/, as the repository root
// relative paths.
func pages(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") || path == "README.md" {
			return err
		}
		files = append(files, filepath.Join("docs", path))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// readPage reads a page by its repository-relative path.
func readPage(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", file))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// allBlocks parses every page's fenced blocks (``` or ~~~).
func allBlocks(t *testing.T) []block {
	t.Helper()
	var out []block
	for _, f := range pages(t) {
		out = append(out, parseBlocks(f, readPage(t, f))...)
	}
	return out
}

func parseBlocks(file, page string) []block {
	var out []block
	lines := strings.Split(page, "\n")
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimSpace(lines[i])
		fence := ""
		switch {
		case strings.HasPrefix(trimmed, "```"):
			fence = "```"
		case strings.HasPrefix(trimmed, "~~~"):
			fence = "~~~"
		default:
			continue
		}
		b := block{file: file, line: i + 1}
		if f := strings.Fields(strings.TrimPrefix(trimmed, fence)); len(f) > 0 {
			b.lang = f[0]
		}
		for j := i - 1; j >= 0; j-- {
			prev := strings.TrimSpace(lines[j])
			if prev == "" {
				continue
			}
			if m := markerRE.FindStringSubmatch(prev); m != nil {
				b.marker, b.arg = m[1], m[2]
			}
			break
		}
		indent := len(lines[i]) - len(strings.TrimLeft(lines[i], " "))
		var body []string
		for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), fence); i++ {
			l := lines[i]
			if len(l) >= indent && strings.TrimSpace(l[:indent]) == "" {
				l = l[indent:]
			}
			body = append(body, l)
		}
		b.text = strings.Join(body, "\n")
		out = append(out, b)
	}
	return out
}

// runnable are the languages the doc tests run (see docs/README.md).
var runnable = map[string]bool{"sh": true, "json": true, "cedar": true, "cedarschema": true, "go": true, "nginx": true}

// Every block is run by a test or says why not: a language the tests run,
// or a marker naming who checks it (output, example) or why it is only an
// illustration. A new page passes this test once its blocks follow
// docs/README.md.
func TestEveryBlockIsRunOrMarked(t *testing.T) {
	blocks := allBlocks(t)
	if len(blocks) < 40 {
		t.Fatalf("found only %d blocks in README.md and docs/: the parser is broken", len(blocks))
	}
	illustrative := 0
	for _, b := range blocks {
		switch {
		case b.marker == "illustrative":
			illustrative++
			if len(b.arg) < 10 {
				t.Errorf("%s: an illustrative block needs its reason: <!-- illustrative: why it cannot run, and what checks it instead -->", b)
			}
		case b.marker == "output":
			if outputChecks[b.arg] == nil {
				t.Errorf("%s: <!-- output: %s --> names no check in docs/output_test.go (have %v)", b, b.arg, outputNames())
			}
		case b.marker == "example":
			if b.lang != "cedar" {
				t.Errorf("%s: <!-- example: %s --> marks a worked Cedar policy; this block is %q", b, b.arg, b.lang)
			}
		case !runnable[b.lang]:
			t.Errorf("%s: a %q block is neither run nor marked; give it a language the doc tests run (sh, json, cedar, cedarschema, go, nginx), <!-- output: CHECK --> for text the server prints, or <!-- illustrative: reason --> (docs/README.md)", b, b.lang)
		}
	}
	t.Logf("%d blocks, %d illustrative", len(blocks), illustrative)
}
