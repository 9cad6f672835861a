package skill

import "strings"

// NoSkillsPrompt is the skills prompt when no loaded skill has a description.
const NoSkillsPrompt = "No skills are currently available."

const promptHeader = "Skills provide specialized instructions and workflows for specific tasks.\n" +
	"Use the skill tool to load a skill when a task matches its description.\n" +
	"\n" +
	"## Available Skills"

// buildPrompt renders the catalog for the system prompt: one line per
// skill that has a description, in the order given (sorted by name). A
// skill without a description stays loadable but is not advertised: the
// model could not tell when to use it.
func buildPrompt(skills []Skill) string {
	var b strings.Builder
	for _, s := range skills {
		if s.Description == "" {
			continue
		}
		if b.Len() == 0 {
			b.WriteString(promptHeader)
		}
		b.WriteString("\n- **" + s.Name + "**: " + s.Description)
	}
	if b.Len() == 0 {
		return NoSkillsPrompt
	}
	return b.String()
}
