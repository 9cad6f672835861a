package skill_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/skill"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// A skills folder with one skill, served through a registry the way the
// server does it: the prompt goes into the model's system prompt, and the
// model loads the skill by calling the skill tool.
func Example() {
	dir, err := os.MkdirTemp("", "skills")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	_ = os.MkdirAll(filepath.Join(dir, "release", "scripts"), 0o755)
	_ = os.WriteFile(filepath.Join(dir, "release", "SKILL.md"), []byte(`---
name: release
description: Cut a release of this project.
---
Run scripts/tag.sh VERSION, then push the tag.
`), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "release", "scripts", "tag.sh"), []byte("#!/bin/sh\n"), 0o755)

	cfg, _, err := skill.ParseConfig(json.RawMessage(`{"dirs": ["release-skills"]}`))
	if err != nil {
		panic(err)
	}
	cfg.Dirs = []string{dir} // in real use, relative to the config file's folder
	src := skill.New(cfg, sources.Env{})
	reg := registry.New()
	if err := src.Start(context.Background(), reg); err != nil {
		panic(err)
	}
	defer src.Close(context.Background())

	fmt.Println(src.Prompt())
	fmt.Println("---")
	e, _ := reg.Snapshot().Lookup("skill")
	res := e.Tool.Execute(context.Background(), tool.Call{Arguments: json.RawMessage(`{"name":"release"}`)})
	fmt.Println(strings.ReplaceAll(res.Output, dir, "/skills"))
	// Output:
	// Skills provide specialized instructions and workflows for specific tasks.
	// Use the skill tool to load a skill when a task matches its description.
	//
	// ## Available Skills
	// - **release**: Cut a release of this project.
	// ---
	// <skill_content name="release">
	// # Skill: release
	//
	// Run scripts/tag.sh VERSION, then push the tag.
	//
	// Base directory for this skill: file:///skills/release
	// Relative paths in this skill (e.g., scripts/, reference/) are relative to this base directory.
	// Note: file list is sampled.
	//
	// <skill_files>
	// <file>/skills/release/scripts/tag.sh</file>
	// </skill_files>
	// </skill_content>
}
