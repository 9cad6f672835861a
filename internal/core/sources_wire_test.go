package core_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/inproc"
)

// Real sources over real gRPC: what an agent sees end to end.

func writeSkill(t *testing.T, root, name, description, body string) string {
	t.Helper()
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(filepath.Join(dir, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	md := fmt.Sprintf("---\nname: %s\ndescription: %s\n---\n%s\n", name, description, body)
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "scripts", "run.sh"), []byte("echo hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestSkillsOverGRPC(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := writeSkill(t, root, "deploy", "Ship a release safely.", "Run the checks, then tag.")
	writeSkill(t, root, "notes", "Keep release notes.", "Write them down.")
	if err := os.MkdirAll(filepath.Join(root, "broken"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "broken", "SKILL.md"), []byte("---\ndescription: no name\n---\nbody\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`{"builtins": false, "skills": {"dirs": [%q]}}`, root)
	f := inproc.Serve(t, cfg)

	list, err := f.Registry.ListTools(context.Background(), &pb.ListToolsRequest{Sources: []string{"skill"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.GetTools()) != 1 || list.GetTools()[0].GetName() != "skill" || list.GetTools()[0].GetSource() != "skill" {
		t.Fatalf("skill tools = %v", list.GetTools())
	}

	res := f.Execute(t, context.Background(), "skill", `{"name":"deploy"}`)
	want := strings.Join([]string{
		`<skill_content name="deploy">`,
		"# Skill: deploy",
		"",
		"Run the checks, then tag.",
		"",
		"Base directory for this skill: file://" + dir,
		"Relative paths in this skill (e.g., scripts/, reference/) are relative to this base directory.",
		"Note: file list is sampled.",
		"",
		"<skill_files>",
		"<file>" + filepath.Join(dir, "scripts", "run.sh") + "</file>",
		"</skill_files>",
		"</skill_content>",
	}, "\n")
	if res.GetIsError() || res.GetOutput() != want {
		t.Fatalf("skill output:\n%s\nwant:\n%s", res.GetOutput(), want)
	}
	if md := res.GetMetadata().AsMap(); md["name"] != "deploy" || md["dir"] != dir {
		t.Errorf("metadata %v", md)
	}
	res = f.Execute(t, context.Background(), "skill", `{"name":"nope"}`)
	if !res.GetIsError() || res.GetOutput() != `Skill "nope" not found. Available skills: deploy, notes` {
		t.Fatalf("unknown skill: %v", res)
	}

	prompt, err := f.Registry.GetSkillsPrompt(context.Background(), &pb.GetSkillsPromptRequest{})
	if err != nil {
		t.Fatal(err)
	}
	wantPrompt := "Skills provide specialized instructions and workflows for specific tasks.\n" +
		"Use the skill tool to load a skill when a task matches its description.\n\n" +
		"## Available Skills\n- **deploy**: Ship a release safely.\n- **notes**: Keep release notes."
	if prompt.GetPrompt() != wantPrompt {
		t.Fatalf("prompt:\n%q\nwant:\n%q", prompt.GetPrompt(), wantPrompt)
	}

	inv, err := f.Sources.ListSkills(context.Background(), &pb.ListSkillsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.GetSkills()) != 2 || inv.GetSkills()[0].GetName() != "deploy" || inv.GetSkills()[0].GetPath() != filepath.Join(dir, "SKILL.md") {
		t.Fatalf("skills %v", inv.GetSkills())
	}
	if len(inv.GetSkipped()) != 1 || inv.GetSkipped()[0].GetReason() != "missing-name" {
		t.Fatalf("skipped %v", inv.GetSkipped())
	}

	// Reload re-discovers: a new skill appears without a config change.
	writeSkill(t, root, "audit", "Audit access.", "Check the logs.")
	if _, err := f.Sources.Reload(context.Background(), &pb.ReloadRequest{}); err != nil {
		t.Fatal(err)
	}
	if res := f.Execute(t, context.Background(), "skill", `{"name":"audit"}`); res.GetIsError() {
		t.Fatalf("after reload: %v", res)
	}
}

func TestNoSkillsConfiguredMeansNoSkillTool(t *testing.T) {
	t.Parallel()
	f := inproc.Serve(t, `{"builtins": false}`)
	list, err := f.Registry.ListTools(context.Background(), &pb.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.GetTools()) != 0 {
		t.Fatalf("tools %v, want none", list.GetTools())
	}
	prompt, err := f.Registry.GetSkillsPrompt(context.Background(), &pb.GetSkillsPromptRequest{})
	if err != nil || prompt.GetPrompt() != "No skills are currently available." {
		t.Fatalf("prompt %q %v", prompt.GetPrompt(), err)
	}
}

func TestHTTPToolsOverGRPC(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3cret-value" {
			http.Error(w, "no auth", http.StatusUnauthorized)
			return
		}
		if r.URL.Path == "/posts/404" {
			http.Error(w, "no such post", http.StatusNotFound)
			return
		}
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s q=%s body=%s", r.Method, r.URL.Path, r.URL.RawQuery, body)
	}))
	defer api.Close()
	t.Setenv("API_TOKEN", "s3cret-value")
	cfg := fmt.Sprintf(`{"builtins": false, "http": [
		{"name": "get_post", "url": %q, "headers": {"Authorization": "Bearer ${API_TOKEN}"}},
		{"name": "create_post", "method": "POST", "url": %q, "headers": {"Authorization": "Bearer ${API_TOKEN}"}}
	]}`, api.URL+"/posts/{id}", api.URL+"/posts")
	f := inproc.Serve(t, cfg)

	list, err := f.Registry.ListTools(context.Background(), &pb.ListToolsRequest{Sources: []string{"http"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.GetTools()) != 2 {
		t.Fatalf("http tools %v", list.GetTools())
	}
	res := f.Execute(t, context.Background(), "get_post", `{"id":"7","verbose":"yes"}`)
	if res.GetIsError() || res.GetOutput() != "GET /posts/7 q=verbose=yes body=" {
		t.Fatalf("get_post: %v", res)
	}
	res = f.Execute(t, context.Background(), "create_post", `{"title":"hi"}`)
	if res.GetIsError() || res.GetOutput() != `POST /posts q= body={"title":"hi"}` {
		t.Fatalf("create_post: %v", res)
	}
	res = f.Execute(t, context.Background(), "get_post", `{"id":"404"}`)
	if !res.GetIsError() || res.GetOutput() != "HTTP 404: no such post\n" || res.GetMetadata().AsMap()["status"] != float64(404) {
		t.Fatalf("404: %v", res)
	}
	body := f.Scrape(t)
	if line := testutil.MetricLine(body, "toolnexus_tool_calls_total", `source="http"`, `tool="get_post"`, `outcome="ok"`); !strings.HasSuffix(line, " 1") {
		t.Errorf("calls_total{source=http,ok} = %q", line)
	}
	if line := testutil.MetricLine(body, "toolnexus_tool_calls_total", `source="http"`, `tool="get_post"`, `outcome="tool_error"`); !strings.HasSuffix(line, " 1") {
		t.Errorf("calls_total{source=http,tool_error} = %q", line)
	}
	if strings.Contains(body, "s3cret-value") {
		t.Error("the secret header value reached /metrics")
	}
	srcs, err := f.Sources.ListSources(context.Background(), &pb.ListSourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(srcs.GetSources())
	if strings.Contains(string(js), "s3cret-value") {
		t.Error("the secret reached ListSources")
	}
}
