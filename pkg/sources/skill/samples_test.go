package skill_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/sources/skill"
)

// The sample skills in the repository's skills/ folder ship in the embedded
// default config, so they must load cleanly and be advertised.
func TestSampleSkills(t *testing.T) {
	f := start(t, skill.Config{Dirs: []string{filepath.Join("..", "..", "..", "skills")}}, "")
	skills, skipped := f.src.Inventory()
	if len(skipped) != 0 {
		t.Errorf("sample skills skipped: %+v", skipped)
	}
	if got := join(f.names()); got != "code-review,commit-message" {
		t.Errorf("sample skills = %s", got)
	}
	for _, s := range skills {
		if s.Description == "" || strings.Contains(s.Description, "\n") {
			t.Errorf("%s: description must be one non-empty line, got %q", s.Name, s.Description)
		}
		if !strings.Contains(f.src.Prompt(), "- **"+s.Name+"**: "+s.Description) {
			t.Errorf("%s not in the prompt", s.Name)
		}
	}
	out := f.load("code-review").Output
	if !strings.Contains(out, "/skills/code-review/checklist.md</file>") {
		t.Errorf("code-review should list its checklist:\n%s", out)
	}
}
