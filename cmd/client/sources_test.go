package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

func TestSources(t *testing.T) {
	// A native debug_echo shadows the debug one (native > debug).
	srv := startServer(t, debugOnly, nativeEcho("debug_echo"), nativeEcho("mine"))

	out := against(t, srv, "sources").want(t, 0).stdout
	lines := strings.Split(out, "\n")
	if f := strings.Fields(lines[0]); strings.Join(f, " ") != "KIND NAME STATUS TOOLS ERROR" {
		t.Fatalf("header %q", lines[0])
	}
	rows := map[string]string{}
	for _, l := range lines[1:] {
		if f := strings.Fields(l); len(f) == 5 {
			rows[f[0]+"/"+f[1]] = strings.Join(f[2:], " ")
		}
	}
	if rows["debug/debug"] != "connected 4 -" || rows["native/native"] != "connected 2 -" {
		t.Errorf("rows %v\n%s", rows, out)
	}
	if !strings.Contains(out, "\nShadowed (hidden by a higher-precedence source with the same name):\n  debug/debug: debug_echo\n") {
		t.Errorf("shadowed tool not listed:\n%s", out)
	}

	var doc struct {
		Sources []struct {
			Kind      string   `json:"kind"`
			ToolCount int      `json:"tool_count"`
			Shadowed  []string `json:"shadowed"`
		} `json:"sources"`
	}
	js := against(t, srv, "sources", "--json").want(t, 0).stdout
	if err := json.Unmarshal([]byte(js), &doc); err != nil || len(doc.Sources) == 0 {
		t.Fatalf("sources --json: %v\n%s", err, js)
	}
	for _, s := range doc.Sources {
		if s.Kind == "debug" && (s.ToolCount != 4 || len(s.Shadowed) != 1) {
			t.Errorf("debug source %+v", s)
		}
	}
}

func TestSkills(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "skills")
	for path, body := range map[string]string{
		"pdf/SKILL.md":      "---\nname: pdf\ndescription: Read PDFs.\n---\nUse pdftotext.\n",
		"nameless/SKILL.md": "---\ndescription: no name here\n---\nbody\n",
	} {
		p := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg, _ := json.Marshal(map[string]any{"debug": true, "builtins": false, "skills": []string{root}})
	srv := startServerIn(t, dir, string(cfg))

	out := against(t, srv, "skills").want(t, 0).stdout
	lines := strings.Split(out, "\n")
	if f := strings.Fields(lines[0]); strings.Join(f, " ") != "NAME DESCRIPTION DIR" {
		t.Fatalf("header %q\n%s", lines[0], out)
	}
	if f := strings.Fields(lines[1]); len(f) != 4 || f[0] != "pdf" || f[1]+" "+f[2] != "Read PDFs." || !strings.HasSuffix(f[3], "pdf") {
		t.Errorf("skill row %q", lines[1])
	}
	if !strings.Contains(out, "\nSkipped:\nPATH") || !strings.Contains(out, filepath.Join("nameless", "SKILL.md")) || !strings.Contains(out, "missing-name") {
		t.Errorf("skipped entry missing:\n%s", out)
	}

	var doc struct {
		Skills  []struct{ Name, Dir string }
		Skipped []struct{ Path, Reason string }
	}
	js := against(t, srv, "skills", "--json").want(t, 0).stdout
	if err := json.Unmarshal([]byte(js), &doc); err != nil || len(doc.Skills) != 1 || len(doc.Skipped) != 1 || doc.Skipped[0].Reason != "missing-name" {
		t.Fatalf("skills --json: %v\n%s", err, js)
	}

	want := "Skills provide specialized instructions and workflows for specific tasks.\n" +
		"Use the skill tool to load a skill when a task matches its description.\n\n" +
		"## Available Skills\n- **pdf**: Read PDFs.\n"
	if out := against(t, srv, "skills-prompt").want(t, 0).stdout; out != want {
		t.Errorf("skills-prompt:\n%q\nwant\n%q", out, want)
	}
}

func TestNoSkills(t *testing.T) {
	srv := startServer(t, debugOnly)
	if out := against(t, srv, "skills").want(t, 0).stdout; out != "No skills found.\n" {
		t.Errorf("skills with none configured: %q", out)
	}
	if out := against(t, srv, "skills-prompt").want(t, 0).stdout; out != "No skills are currently available.\n" {
		t.Errorf("skills-prompt with none: %q", out)
	}
}

func TestPrintSkills(t *testing.T) {
	var b strings.Builder
	err := printSkills(&b, &pb.ListSkillsResponse{
		Skills: []*pb.Skill{
			{Name: "pdf", Description: "Read PDFs.\nMore detail.", Dir: "/s/pdf"},
			{Name: "bare", Dir: "/s/bare"},
		},
		Skipped: []*pb.SkippedSkill{{Path: "/s/x/SKILL.md", Reason: "missing-name", Detail: "frontmatter has no name"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "NAME  DESCRIPTION   DIR\n" +
		"pdf   Read PDFs. …  /s/pdf\n" +
		"bare  -             /s/bare\n" +
		"\nSkipped:\n" +
		"PATH           REASON        DETAIL\n" +
		"/s/x/SKILL.md  missing-name  frontmatter has no name\n"
	if b.String() != want {
		t.Fatalf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestReload(t *testing.T) {
	dir := t.TempDir()
	srv := startServerIn(t, dir, debugOnly)
	cfg := filepath.Join(dir, "toolnexus.json")

	out := against(t, srv, "reload").want(t, 0).stdout
	if !strings.HasPrefix(out, "reloaded: revision ") || !strings.Contains(out, "\nrebuilt: ") {
		t.Fatalf("reload: %q", out)
	}

	// A broken config is refused with the server's reason; exit 1.
	if err := os.WriteFile(cfg, []byte(`{"debug": true, "bogus": 1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := against(t, srv, "reload").want(t, 1)
	if !strings.Contains(r.stderr, "toolnexus reload: FailedPrecondition: ") || !strings.Contains(r.stderr, "bogus") {
		t.Fatalf("stderr %q", r.stderr)
	}
}

func TestHealth(t *testing.T) {
	srv := startServer(t, debugOnly)
	if out := against(t, srv, "health").want(t, 0).stdout; out != "SERVING\n" {
		t.Fatalf("health: %q", out)
	}
	if out := against(t, srv, "health", "--service", "toolnexus.v1.RegistryService").want(t, 0).stdout; out != "SERVING\n" {
		t.Fatalf("health --service: %q", out)
	}
	js := against(t, srv, "--json", "health").want(t, 0).stdout
	var doc struct{ Status string }
	if err := json.Unmarshal([]byte(js), &doc); err != nil || doc.Status != "SERVING" {
		t.Fatalf("health --json: %v %q", err, js)
	}
	r := against(t, srv, "health", "--service", "no.Such").want(t, 1)
	if !strings.Contains(r.stderr, "NotFound") {
		t.Fatalf("unknown service: %q", r.stderr)
	}

	// After shutdown there is no server: exit 1, not SERVING.
	if err := srv.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	r = against(t, srv, "health").want(t, 1)
	if strings.Contains(r.stdout, "SERVING") {
		t.Fatalf("stopped server reported %q", r.stdout)
	}
}

// A stdio MCP server with "sandbox" is listed under "Sandboxed" with how
// it is confined. The server is this test binary again, serving no tools.
func TestSourcesSandboxedMCPServer(t *testing.T) {
	if os.Getenv("TN_CLI_MCP_CHILD") == "1" {
		s := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "empty", Version: "1"}, nil)
		if err := s.Run(context.Background(), &mcpsdk.StdioTransport{}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	self, err := filepath.Abs(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{"builtins": false, "mcpServers": map[string]any{"box": map[string]any{
		"command": []string{self, "-test.run=^TestSourcesSandboxedMCPServer$"},
		"env":     map[string]string{"TN_CLI_MCP_CHILD": "1"},
		"sandbox": map[string]any{"readPaths": []string{filepath.Dir(self)}},
	}}})
	srv := startServer(t, string(cfg))
	out := against(t, srv, "sources").want(t, 0).stdout
	if !strings.Contains(out, "\nSandboxed (their processes run in the command sandbox):\n  mcp/box: sandboxed (auto): network off;") {
		t.Errorf("the sandboxed server is not listed as such:\n%s", out)
	}
	js := against(t, srv, "sources", "--json").want(t, 0).stdout
	if !strings.Contains(js, `"sandbox": "sandboxed (auto)`) && !strings.Contains(js, `"sandbox":"sandboxed (auto)`) {
		t.Errorf("sources --json lacks the sandbox field:\n%s", js)
	}
}

// The stderr tail a failed stdio server leaves in its status reaches the
// reader of `toolnexus sources` in full, wrapped after the table: the
// ERROR column alone cut it at 60 characters, before the tail began.
func TestSourcesShowTheWholeError(t *testing.T) {
	srv := startServer(t, `{"builtins": false, "skills": [], "mcpServers": {"fetcher": {"command": "sh",
		"args": ["-c", "echo 'npm error code EAI_AGAIN' >&2; echo 'npm error request to https://registry.npmjs.org/@acme/fetch failed' >&2; exit 1"]}}}`)
	out := against(t, srv, "sources").want(t, 0).stdout
	_, full, ok := strings.Cut(out, "\nErrors in full:\n  mcp/fetcher:\n")
	if !ok {
		t.Fatalf("no full error after the table:\n%s", out)
	}
	joined := strings.Join(strings.Fields(full), " ")
	for _, want := range []string{"npm error code EAI_AGAIN", "npm error request to https://registry.npmjs.org/@acme/fetch failed"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the stderr tail %q is not shown:\n%s", want, out)
		}
	}
	for _, line := range strings.Split(full, "\n") {
		if len(line) > wrapWidth {
			t.Errorf("a line of %d bytes (wrapped at %d): %q", len(line), wrapWidth, line)
		}
	}
}
