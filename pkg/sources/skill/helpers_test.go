package skill_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/skill"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// write creates path (and its parents) with content.
func write(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// skillMD is a SKILL.md with a plain name and description.
func skillMD(name, description, body string) string {
	return "---\nname: " + name + "\ndescription: " + description + "\n---\n" + body
}

type logBuffer = testutil.Buffer

type fixture struct {
	src *skill.Source
	reg *registry.Registry
	log *logBuffer
}

// start makes a source over cfg, starts it into a fresh registry and fails
// the test on a start error.
func start(t *testing.T, cfg skill.Config, baseDir string) fixture {
	t.Helper()
	lb := &logBuffer{}
	env := sources.Env{Logger: slog.New(slog.NewTextHandler(lb, nil)), BaseDir: baseDir}
	src := skill.New(cfg, env)
	reg := registry.New(registry.WithLogger(env.Logger))
	if err := src.Start(context.Background(), reg); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := src.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return fixture{src: src, reg: reg, log: lb}
}

// load calls the skill tool through the registry, as the server does.
func (f fixture) load(name string) tool.Result {
	args, _ := json.Marshal(map[string]string{"name": name})
	return testutil.Direct{Reg: f.reg}.Execute(context.Background(), skill.ToolName, tool.Call{Arguments: args})
}

// names lists the loaded skills' names in Inventory order.
func (f fixture) names() []string {
	skills, _ := f.src.Inventory()
	out := make([]string, len(skills))
	for i, s := range skills {
		out[i] = s.Name
	}
	return out
}

func join(s []string) string { return strings.Join(s, ",") }

func sourcesEnv(baseDir string) sources.Env {
	return sources.Env{Logger: slog.New(slog.DiscardHandler), BaseDir: baseDir}
}
