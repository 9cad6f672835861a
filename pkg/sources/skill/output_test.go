package skill_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/sources/skill"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// pdfSkill lays out a skill with resources in nested folders, plus things
// the file list must leave out: .git, node_modules and a nested SKILL.md.
func pdfSkill(t testing.TB, root string) {
	write(t, filepath.Join(root, "pdf", "SKILL.md"), "---\n"+
		"name: pdf\n"+
		"description: Fill and inspect PDF forms.\n"+
		"---\n"+
		"\n\n# PDF forms\n\nRun `scripts/fill.py IN OUT` to fill a form.\n\n---\n\nSee reference/forms.md.\n\n\n")
	write(t, filepath.Join(root, "pdf", "LICENSE.txt"), "MIT\n")
	write(t, filepath.Join(root, "pdf", "a.md"), "notes\n")
	write(t, filepath.Join(root, "pdf", "reference", "forms.md"), "# Forms\n")
	write(t, filepath.Join(root, "pdf", "scripts", "fill.py"), "print('fill')\n")
	write(t, filepath.Join(root, "pdf", "scripts", "lib", "util.py"), "pass\n")
	write(t, filepath.Join(root, "pdf", "scripts", "lib", "SKILL.md"), skillMD("pdf-lib", "Helpers.", "Internal."))
	write(t, filepath.Join(root, "pdf", ".git", "config"), "[core]\n")
	write(t, filepath.Join(root, "pdf", "node_modules", "x", "index.js"), "\n")
}

func TestOutputGolden(t *testing.T) {
	cases := []struct {
		golden      string
		skill       string
		sampleLimit int
		layout      func(t testing.TB, root string)
	}{
		{"nested.golden", "pdf", 0, pdfSkill},
		{"limit2.golden", "pdf", 2, pdfSkill},
		{"nolist.golden", "pdf", -1, pdfSkill},
		{"none.golden", "lonely", 0, func(t testing.TB, root string) {
			write(t, filepath.Join(root, "lonely", "SKILL.md"), skillMD("lonely", "Has no files.", "Just this text."))
		}},
	}
	for _, c := range cases {
		t.Run(c.golden, func(t *testing.T) {
			root := t.TempDir()
			c.layout(t, root)
			f := start(t, skill.Config{Dirs: []string{root}, SampleLimit: c.sampleLimit}, "")
			res := f.load(c.skill)
			if res.IsError {
				t.Fatalf("load %s failed: %s", c.skill, res.Output)
			}
			got := strings.ReplaceAll(res.Output, root, "$ROOT")
			checkGolden(t, c.golden, got)

			wantDir := filepath.Join(root, c.skill)
			if res.Metadata["name"] != c.skill || res.Metadata["dir"] != wantDir {
				t.Errorf("metadata = %v, want name %q dir %q", res.Metadata, c.skill, wantDir)
			}
			if res.Resolved() != tool.OutcomeOK {
				t.Errorf("outcome = %v, want ok", res.Resolved())
			}
		})
	}
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}

func TestOutputSampleCaps(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "big", "SKILL.md"), skillMD("big", "Many files.", "Body."))
	for i := range 12 {
		write(t, filepath.Join(root, "big", fmt.Sprintf("f%02d.txt", i)), "x")
	}
	for _, c := range []struct {
		limit, want int
	}{{0, 10}, {3, 3}, {20, 12}, {-1, 0}} {
		f := start(t, skill.Config{Dirs: []string{root}, SampleLimit: c.limit}, "")
		out := f.load("big").Output
		if n := strings.Count(out, "<file>"); n != c.want {
			t.Errorf("sampleLimit %d: %d files listed, want %d", c.limit, n, c.want)
		}
		if c.want > 0 && !strings.Contains(out, "<file>"+filepath.Join(root, "big", "f00.txt")+"</file>") {
			t.Errorf("sampleLimit %d: first file in lexical order missing:\n%s", c.limit, out)
		}
	}
}

func TestOutputEscapesDirAsURL(t *testing.T) {
	root := filepath.Join(t.TempDir(), "my skills")
	write(t, filepath.Join(root, "s", "SKILL.md"), skillMD("s", "Spaced.", "Body."))
	f := start(t, skill.Config{Dirs: []string{root}}, "")
	out := f.load("s").Output
	want := "Base directory for this skill: file://" + strings.ReplaceAll(filepath.ToSlash(root), " ", "%20") + "/s\n"
	if !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
	if !strings.Contains(out, "<skill_files>\n\n</skill_files>") {
		t.Errorf("a skill without files keeps an empty <skill_files> block:\n%s", out)
	}
}

func TestNotFound(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "b", "SKILL.md"), skillMD("beta", "B.", "b"))
	write(t, filepath.Join(root, "a", "SKILL.md"), skillMD("alpha", "A.", "a"))
	f := start(t, skill.Config{Dirs: []string{root}}, "")
	res := f.load("gamma")
	if !res.IsError || res.Output != `Skill "gamma" not found. Available skills: alpha, beta` {
		t.Errorf("got %+v", res)
	}

	empty := start(t, skill.Config{Dirs: []string{t.TempDir()}}, "")
	res = empty.load("alpha")
	if !res.IsError || res.Output != `Skill "alpha" not found. Available skills: none` {
		t.Errorf("with no skills: got %+v", res)
	}
}

func TestInvalidArguments(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "a", "SKILL.md"), skillMD("alpha", "A.", "a"))
	f := start(t, skill.Config{Dirs: []string{root}}, "")
	for _, args := range []string{`{}`, `{"name":7}`, `{"name":null}`} {
		res := testutil.Direct{Reg: f.reg}.Execute(t.Context(), skill.ToolName, tool.Call{Arguments: []byte(args)})
		if !res.IsError || res.Resolved() != tool.OutcomeInvalidArguments || !strings.Contains(res.Output, `"name" must be a string`) {
			t.Errorf("%s: got %+v", args, res)
		}
	}
}

func TestToolShape(t *testing.T) {
	f := start(t, skill.Config{Dirs: []string{t.TempDir()}}, "")
	e, ok := f.reg.Snapshot().Lookup(skill.ToolName)
	if !ok {
		t.Fatal("the skill tool is not registered")
	}
	if e.Tool.Source != "skill" {
		t.Errorf("source = %q", e.Tool.Source)
	}
	const schema = `{"type":"object","properties":{"name":{"type":"string","description":"The name of the skill to load"}},"required":["name"],"additionalProperties":false}`
	if string(e.Tool.InputSchema) != schema {
		t.Errorf("schema = %s", e.Tool.InputSchema)
	}
	const desc = "Load a specialized skill when the task at hand matches one of the skills listed in the system prompt.\n\n" +
		"Use this tool to inject the skill's instructions and resources into current conversation. The output may contain detailed workflow guidance as well as references to scripts, files, etc in the same directory as the skill.\n\n" +
		"The skill name must match one of the skills listed in your system prompt."
	if e.Tool.Description != desc {
		t.Errorf("description = %q", e.Tool.Description)
	}
	if f.src.Layer().String() != "skill/skill" {
		t.Errorf("layer = %s", f.src.Layer())
	}
}
