package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// docCommands are the `toolnexus exec` command lines in the code blocks of
// README.md and docs/*.md, split as a shell would (quotes, a trailing
// comment, `; ...` and `\` continuations dropped).
func docCommands(t *testing.T) map[string][]string {
	t.Helper()
	files, _ := filepath.Glob("../../docs/*.md")
	files = append(files, "../../README.md")
	out := map[string][]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inBlock := false
		for i, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				inBlock = !inBlock
				continue
			}
			line = strings.TrimSpace(line)
			rest, ok := strings.CutPrefix(line, "bin/toolnexus exec ")
			if !inBlock || !ok {
				continue
			}
			words, ok := shellWords(rest)
			if !ok {
				t.Errorf("%s:%d: cannot split %q", f, i+1, line)
				continue
			}
			out[filepath.Base(f)+":"+strconv.Itoa(i+1)] = append([]string{"exec"}, words...)
		}
	}
	return out
}

// shellWords splits a command line: single and double quotes, and it stops
// at an unquoted #, ; or a trailing \.
func shellWords(s string) ([]string, bool) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\'' || c == '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return nil, false
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == ' ' || c == '\t':
			if inWord {
				words, inWord = append(words, cur.String()), false
				cur.Reset()
			}
		case c == '#' || c == ';' || c == '\\':
			i = len(s)
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, true
}

// Every `toolnexus exec` line the docs show is accepted by the CLI: run
// against a real server offering each named tool (an echo), none is a
// usage error (exit 2), so a reader who copies one gets a tool result.
func TestDocumentedExecCommandsWork(t *testing.T) {
	cmds := docCommands(t)
	if len(cmds) == 0 {
		t.Fatal("no `bin/toolnexus exec` line found in the docs")
	}
	// The tool is the first word after exec that is not a flag (the docs
	// put flags after the name).
	seen := map[string]bool{}
	var tools []tool.Tool
	for _, words := range cmds {
		if name := words[1]; !strings.HasPrefix(name, "-") && !seen[name] {
			seen[name] = true
			tools = append(tools, nativeEcho(name))
		}
	}
	srv := startServer(t, `{"builtins": false, "skills": []}`, tools...)
	for at, words := range cmds {
		t.Run(at, func(t *testing.T) {
			r := against(t, srv, words...)
			if r.code == 2 {
				t.Fatalf("%s: toolnexus %s is a usage error: %s", at, strings.Join(words, " "), r.stderr)
			}
		})
	}
}

// `toolnexus list --sources` filters by source, as --source does (the
// request field is "sources"; a user reaches for the plural).
func TestListSourcesFlag(t *testing.T) {
	srv := startServer(t, debugOnly, nativeEcho("custom_echo"))
	for _, args := range [][]string{{"list", "--sources", "debug"}, {"list", "--source", "debug"}, {"list", "--sources", "debug,custom"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			out := against(t, srv, args...).want(t, 0).stdout
			if !strings.Contains(out, "debug_echo") {
				t.Errorf("no debug tool listed:\n%s", out)
			}
			if strings.Contains(args[2], "custom") != strings.Contains(out, "custom_echo") {
				t.Errorf("custom_echo listed = %v for %v:\n%s", strings.Contains(out, "custom_echo"), args, out)
			}
		})
	}
}

// The README links every example directory (the Python one was missing),
// and every relative link it has points at a file that exists.
func TestReadmeLinksEveryExample(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	dirs, _ := filepath.Glob("../../examples/*")
	for _, d := range dirs {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			continue
		}
		rel := strings.TrimPrefix(d, "../../")
		if !strings.Contains(readme, "]("+rel) && !strings.Contains(readme, "`"+rel) {
			t.Errorf("README.md does not mention %s", rel)
		}
	}
	if !strings.Contains(readme, "](examples/python/README.md)") {
		t.Error("README.md does not link the Python example's README")
	}
	for _, m := range regexp.MustCompile(`\]\(([^)#:]+)(?:#[^)]*)?\)`).FindAllStringSubmatch(readme, -1) {
		if _, err := os.Stat(filepath.Join("../..", m[1])); err != nil {
			t.Errorf("README.md links %s: %v", m[1], err)
		}
	}
}
