package skill_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources/skill"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// BenchmarkLoad is the Execute path: decode the name, one map lookup, the
// pre-rendered output.
func BenchmarkLoad(b *testing.B) {
	root := b.TempDir()
	pdfSkill(b, root)
	src := skill.New(skill.Config{Dirs: []string{root}}, sourcesEnv(""))
	reg := registry.New()
	if err := src.Start(context.Background(), reg); err != nil {
		b.Fatal(err)
	}
	call := tool.Call{Arguments: json.RawMessage(`{"name":"pdf"}`)}
	b.ReportAllocs()
	for b.Loop() {
		if res := (testutil.Direct{Reg: reg}).Execute(context.Background(), skill.ToolName, call); res.IsError {
			b.Fatal(res.Output)
		}
	}
}

// BenchmarkRebuild is one reload over 100 skills with a few files each.
func BenchmarkRebuild(b *testing.B) {
	root := b.TempDir()
	for i := range 100 {
		dir := filepath.Join(root, fmt.Sprintf("s%03d", i))
		write(b, filepath.Join(dir, "SKILL.md"), skillMD(fmt.Sprintf("s%03d", i), "A skill.", "Body."))
		write(b, filepath.Join(dir, "scripts", "run.sh"), "#!/bin/sh\n")
		write(b, filepath.Join(dir, "reference.md"), "ref\n")
	}
	src := skill.New(skill.Config{Dirs: []string{root}}, sourcesEnv(""))
	if err := src.Start(context.Background(), registry.New()); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := src.Rebuild(); err != nil {
			b.Fatal(err)
		}
	}
}
