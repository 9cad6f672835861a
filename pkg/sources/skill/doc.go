// Package skill discovers agent skills — folders holding a SKILL.md — and
// serves them to the model through one tool named "skill".
//
// A SKILL.md starts with a YAML frontmatter block naming the skill and
// saying when to use it; the rest is instructions for the model:
//
//	---
//	name: commit-message
//	description: Write a commit message for the staged changes.
//	---
//	Run `git diff --staged`, then ...
//
// The source walks each configured directory (following symlinks, skipping
// .git and node_modules), loads every SKILL.md it finds and publishes the
// skill tool into the registry's skill layer:
//
//	cfg, _, err := skill.ParseConfig(json.RawMessage(`{"dirs": ["./skills"]}`))
//	src := skill.New(cfg, sources.Env{BaseDir: configDir})
//	err = src.Start(ctx, reg)          // discover and publish
//	systemPrompt += src.Prompt()       // tell the model which skills exist
//	e, _ := reg.Snapshot().Lookup("skill")
//	res := e.Tool.Execute(ctx, tool.Call{Arguments: json.RawMessage(`{"name":"commit-message"}`)})
//
// The tool's output is a fixed block: the skill's body, its base directory
// and a sample of the files beside it, so the model can read or run them
// with other tools. Everything the tool returns is rendered at discovery
// time; Rebuild re-discovers (on reload) and republishes atomically.
package skill
