package skill_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/skill"
)

func TestPrompt(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "review", "SKILL.md"), skillMD("code-review", "Review a change before it is merged.", "x"))
	write(t, filepath.Join(root, "commit", "SKILL.md"), skillMD("commit-message", "Write a commit message.", "x"))
	write(t, filepath.Join(root, "quiet", "SKILL.md"), "---\nname: quiet\n---\nNo description, so not advertised.\n")
	f := start(t, skill.Config{Dirs: []string{root}}, "")
	const want = "Skills provide specialized instructions and workflows for specific tasks.\n" +
		"Use the skill tool to load a skill when a task matches its description.\n" +
		"\n" +
		"## Available Skills\n" +
		"- **code-review**: Review a change before it is merged.\n" +
		"- **commit-message**: Write a commit message."
	if got := f.src.Prompt(); got != want {
		t.Errorf("prompt:\n%q\nwant:\n%q", got, want)
	}
	if res := f.load("quiet"); res.IsError {
		t.Errorf("a skill without a description is still loadable: %s", res.Output)
	}
}

func TestPromptWithoutDescribedSkills(t *testing.T) {
	const want = "No skills are currently available."
	if got := skill.New(skill.Config{}, sourcesEnv("")).Prompt(); got != want {
		t.Errorf("before Start: %q", got)
	}
	empty := start(t, skill.Config{Dirs: []string{t.TempDir()}}, "")
	if got := empty.src.Prompt(); got != want {
		t.Errorf("no skills: %q", got)
	}
	root := t.TempDir()
	write(t, filepath.Join(root, "q", "SKILL.md"), "---\nname: quiet\ndescription: \"\"\n---\nx\n")
	quiet := start(t, skill.Config{Dirs: []string{root}}, "")
	if got := quiet.src.Prompt(); got != want {
		t.Errorf("only undescribed skills: %q", got)
	}
	if got := join(quiet.names()); got != "quiet" {
		t.Errorf("skills = %s", got)
	}
}

func TestFilter(t *testing.T) {
	root := t.TempDir()
	for _, n := range []string{"a", "b", "c"} {
		write(t, filepath.Join(root, n, "SKILL.md"), skillMD(n, "Skill "+n+".", n))
	}
	cases := []struct {
		filter sources.Filter
		want   string
	}{
		{nil, "a,b,c"},
		{sources.Filter{"a": true, "c": true, "b": false}, "a,c"},
		{sources.Filter{"b": false}, "a,c"},
		{sources.Filter{"a": true, "zzz": true}, "a"},
	}
	for _, c := range cases {
		f := start(t, skill.Config{Dirs: []string{root}, Tools: c.filter}, "")
		if got := join(f.names()); got != c.want {
			t.Errorf("filter %v: skills %s, want %s", c.filter, got, c.want)
		}
		if strings.Contains(c.want, "b") == strings.Contains(f.src.Prompt(), "**b**") {
			continue
		}
		t.Errorf("filter %v: prompt and inventory disagree:\n%s", c.filter, f.src.Prompt())
	}
	f := start(t, skill.Config{Dirs: []string{root}, Tools: sources.Filter{"a": true, "zzz": true}}, "")
	if !strings.Contains(f.log.String(), `tools filter names unknown tool \"zzz\"`) {
		t.Errorf("unknown filter name not warned about:\n%s", f.log.String())
	}
	if res := f.load("b"); res.Output != `Skill "b" not found. Available skills: a` {
		t.Errorf("a filtered-out skill is not loadable: %q", res.Output)
	}
}

func TestRebuildPicksUpChanges(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "one", "SKILL.md"), skillMD("one", "First.", "1"))
	f := start(t, skill.Config{Dirs: []string{root}}, "")
	rev := f.reg.Snapshot().Revision()
	if res := f.load("two"); !res.IsError {
		t.Fatalf("two exists before it was written: %s", res.Output)
	}

	write(t, filepath.Join(root, "two", "SKILL.md"), skillMD("two", "Second.", "2"))
	write(t, filepath.Join(root, "one", "extra.md"), "new file")
	if err := f.src.Rebuild(); err != nil {
		t.Fatal(err)
	}
	if got := f.reg.Snapshot().Revision(); got != rev+1 {
		t.Errorf("revision %d after rebuild, want %d", got, rev+1)
	}
	if res := f.load("two"); res.IsError || !strings.Contains(res.Output, "# Skill: two") {
		t.Errorf("new skill not loadable: %+v", res)
	}
	if out := f.load("one").Output; !strings.Contains(out, "extra.md") {
		t.Errorf("file sample not refreshed:\n%s", out)
	}
	if got := join(f.names()); got != "one,two" {
		t.Errorf("inventory = %s", got)
	}
	if !strings.Contains(f.src.Prompt(), "- **two**: Second.") {
		t.Errorf("prompt not refreshed:\n%s", f.src.Prompt())
	}
}

func TestRebuildLifecycle(t *testing.T) {
	src := skill.New(skill.Config{Dirs: []string{t.TempDir()}}, sourcesEnv(""))
	if err := src.Rebuild(); !errors.Is(err, skill.ErrNotStarted) {
		t.Errorf("Rebuild before Start = %v", err)
	}
	reg := registry.New()
	if err := src.Start(context.Background(), reg); err != nil {
		t.Fatal(err)
	}
	if err := src.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := src.Rebuild(); !errors.Is(err, skill.ErrClosed) {
		t.Errorf("Rebuild after Close = %v", err)
	}
	if err := src.Start(context.Background(), reg); !errors.Is(err, skill.ErrClosed) {
		t.Errorf("Start after Close = %v", err)
	}
	if _, ok := reg.Snapshot().Lookup(skill.ToolName); !ok {
		t.Error("Close must leave the layer to its owner")
	}
}

func TestStartHonoursContext(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "a", "SKILL.md"), skillMD("a", "A.", "a"))
	src := skill.New(skill.Config{Dirs: []string{root}}, sourcesEnv(""))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	reg := registry.New()
	if err := src.Start(ctx, reg); !errors.Is(err, context.Canceled) {
		t.Fatalf("Start = %v, want context.Canceled", err)
	}
	if st := src.Status(); st.State != sources.Failed || st.Error == "" {
		t.Errorf("status = %+v", st)
	}
	if reg.Snapshot().Len() != 0 {
		t.Error("a failed start published tools")
	}
	if err := src.Start(context.Background(), reg); err != nil {
		t.Fatal(err)
	}
	if st := src.Status(); st.State != sources.Connected || st.Layer != src.Layer() {
		t.Errorf("status after a good start = %+v", st)
	}
}

// Calls keep working, race-free, while reloads swap the catalog under them.
func TestExecuteDuringRebuild(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "a", "SKILL.md"), skillMD("a", "A.", "body a"))
	f := start(t, skill.Config{Dirs: []string{root}}, "")
	var wg sync.WaitGroup
	errs := make(chan string, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				if res := f.load("a"); res.IsError {
					errs <- res.Output
					return
				}
				_ = f.src.Prompt()
				_, _ = f.src.Inventory()
			}
		}()
	}
	for range 20 {
		if err := f.src.Rebuild(); err != nil {
			t.Error(err)
		}
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("call failed during rebuild: %s", e)
	}
}
