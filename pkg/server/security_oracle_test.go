package server_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/mcpclient"
)

// TestDeniedToolIsIndistinguishableFromUnknown is the probing attack: a
// token restricted to debug_echo calls a tool that exists but is outside
// its allowlist and one that does not exist. Over gRPC and over /mcp the
// two answers are the same but for the name, so the allowlist reveals
// nothing about what else the server runs.
func TestDeniedToolIsIndistinguishableFromUnknown(t *testing.T) {
	t.Setenv("TN_SEC_AGENT", agentSecret)
	g := startGateway(t, `{"debug": true, "builtins": false, "skills": [], "auth": {"tokens": [
		{"name": "agent", "token": "${TN_SEC_AGENT}", "tools": ["debug_echo"]}]}}`)
	ctx := bearer(agentSecret)
	answer := func(name string) string {
		resp, err := g.grpc.Execute(ctx, &pb.ExecuteRequest{Name: name, Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{}`}})
		if err != nil {
			t.Fatalf("Execute %s: %v", name, err)
		}
		r := resp.GetResult()
		return fmt.Sprintf("is_error=%v outcome=%v output=%q metadata=%v", r.GetIsError(), r.GetOutcome(), strings.ReplaceAll(r.GetOutput(), name, "NAME"), r.GetMetadata())
	}
	denied, unknown := answer("debug_fail"), answer("no_such_tool")
	if denied != unknown || !strings.Contains(denied, `outcome=OUTCOME_UNKNOWN_TOOL output="unknown tool: NAME"`) {
		t.Fatalf("Execute answers differ:\n denied:  %s\n unknown: %s", denied, unknown)
	}
	for _, name := range []string{"debug_fail", "no_such_tool"} {
		_, err := g.grpc.GetTool(ctx, &pb.GetToolRequest{Name: name})
		if status.Code(err) != codes.NotFound || status.Convert(err).Message() != fmt.Sprintf("no tool named %q (ListTools shows the available names)", name) {
			t.Fatalf("GetTool %s: %v", name, err)
		}
	}
	cs := g.mustConnect(t, agentSecret, nil)
	mcpclient.MustBeUnknown(t, cs, "debug_fail")
	mcpclient.MustBeUnknown(t, cs, "no_such_tool")
	// The operator still sees the denial, without the name reaching the
	// wire: the call counts as denied under the tool in the metrics.
	if testutil.MetricLine(g.scrape(t), "toolnexus_tool_calls_total", `tool="debug_fail"`, `outcome="denied"`, `protocol="grpc"`) == "" {
		t.Error("the denied call is not counted as denied")
	}
}

// TestAgentTokensSeeNoServerInventory: an agent token may read neither the
// sources (their errors, shadowed names) nor the skills' paths on the
// server, and gets no skills catalog unless it may use the skill tool.
func TestAgentTokensSeeNoServerInventory(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "secret-skill"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "secret-skill", "SKILL.md"), []byte("---\nname: secret-skill\ndescription: Internal runbook.\n---\nsteps\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TN_SEC_AGENT", agentSecret)
	t.Setenv("TN_SEC_ADMIN", adminSecret)
	s := serve(t, fmt.Sprintf(`{"debug": true, "builtins": false, "skills": [%q], "auth": {"tokens": [
		{"name": "agent", "token": "${TN_SEC_AGENT}", "tools": ["debug_echo"]},
		{"name": "ops", "token": "${TN_SEC_ADMIN}", "admin": true}]}}`, dir), nil)
	conn := s.dial(t)
	src, reg := pb.NewSourceServiceClient(conn), pb.NewRegistryServiceClient(conn)
	for name, call := range map[string]func(context.Context) error{
		"ListSources": func(ctx context.Context) error { _, err := src.ListSources(ctx, &pb.ListSourcesRequest{}); return err },
		"ListSkills":  func(ctx context.Context) error { _, err := src.ListSkills(ctx, &pb.ListSkillsRequest{}); return err },
	} {
		err := call(bearer(agentSecret))
		want := `token "agent" may not call /toolnexus.v1.SourceService/` + name + `: it needs "admin": true in auth.tokens (SourceService is for operators: agent tokens neither reload the server nor read its sources and paths)`
		if status.Code(err) != codes.PermissionDenied || status.Convert(err).Message() != want {
			t.Errorf("%s as the agent: %v\nwant PermissionDenied: %s", name, err, want)
		}
		if err := call(bearer(adminSecret)); err != nil {
			t.Errorf("%s as the admin: %v", name, err)
		}
	}
	p, err := reg.GetSkillsPrompt(bearer(agentSecret), &pb.GetSkillsPromptRequest{})
	if err != nil || p.GetPrompt() != "No skills are currently available." {
		t.Fatalf("skills prompt for a token without the skill tool: %q %v", p.GetPrompt(), err)
	}
	p, err = reg.GetSkillsPrompt(bearer(adminSecret), &pb.GetSkillsPromptRequest{})
	if err != nil || !strings.Contains(p.GetPrompt(), "secret-skill") {
		t.Fatalf("skills prompt for the admin: %q %v", p.GetPrompt(), err)
	}
}
