package core

// SkillsPromptFor is the skills catalog as a caller sees it through its
// view; the skill source decides what the view lets it see. The zero View
// (auth off, no named view) sees everything.
func (c *Core) SkillsPromptFor(v View) string {
	return c.eng.Skills().PromptFor(v.Allows)
}
