package core

import (
	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/skill"
)

// SkillsPromptFor is the skills catalog as a caller may see it: the
// catalog describes what the skill tool serves, so a caller whose
// allowlist leaves that tool out is told there are no skills, as a server
// without any would tell it. A nil principal (auth off) sees everything.
func (c *Core) SkillsPromptFor(p *auth.Principal) string {
	if !p.Allows(skill.ToolName, sources.KindSkill.Name) {
		return NoSkillsPrompt
	}
	return c.SkillsPrompt()
}
