package core

import "github.com/toolnexus/toolnexus/internal/auth"

// SkillsPromptFor is the skills catalog as a caller may see it; the skill
// source decides what the caller's allowlist lets it see. A nil principal
// (auth off) sees everything.
func (c *Core) SkillsPromptFor(p *auth.Principal) string {
	return c.eng.Skills().PromptFor(p.Allows)
}
