package skill_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/skill"
)

// The catalog follows the caller's allowlist: a caller that may not run the
// skill tool is told there are no skills, exactly as by a server without
// any; one that may (by name or by source) gets the catalog.
func TestPromptForFollowsTheAllowlist(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "skills", "pdf", "SKILL.md"), skillMD("pdf", "Fill in PDF forms.", "body"))
	f := start(t, skill.Config{Dirs: []string{"skills"}}, dir)
	byName := func(name, _ string) bool { return name == skill.ToolName }
	bySource := func(_, source string) bool { return source == sources.KindSkill.Name }
	none := func(string, string) bool { return false }
	if got := f.src.PromptFor(byName); got != f.src.Prompt() || !strings.Contains(got, "Fill in PDF forms.") {
		t.Errorf("allowed by name: %q", got)
	}
	if got := f.src.PromptFor(bySource); got != f.src.Prompt() {
		t.Errorf("allowed by source: %q", got)
	}
	if got := f.src.PromptFor(none); got != skill.NoSkillsPrompt {
		t.Errorf("a caller without the skill tool: %q", got)
	}
	var absent *skill.Source
	if got := absent.PromptFor(byName); got != skill.NoSkillsPrompt {
		t.Errorf("no skill source: %q", got)
	}
}
