package grpcapi_test

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
	"github.com/toolnexus/toolnexus/internal/testutil/inproc"
)

// TestAgentTokensSeeNoServerInventory: an agent token may read neither the
// sources (their errors, shadowed names) nor the skills' paths on the
// server, and gets no skills catalog unless it may use the skill tool.
func TestAgentTokensSeeNoServerInventory(t *testing.T) {
	const agentSecret, adminSecret = "agent-secret-4f9a1c7e", "admin-secret-b27d90aa"
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "secret-skill"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "secret-skill", "SKILL.md"), []byte("---\nname: secret-skill\ndescription: Internal runbook.\n---\nsteps\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TN_SEC_AGENT", agentSecret)
	t.Setenv("TN_SEC_ADMIN", adminSecret)
	r := inproc.Start(t, fmt.Sprintf(`{"debug": true, "builtins": false, "skills": [%q], "auth": {"tokens": [
		{"name": "agent", "token": "${TN_SEC_AGENT}", "tools": ["debug_echo"]},
		{"name": "ops", "token": "${TN_SEC_ADMIN}", "admin": true}]}}`, dir), inproc.Options{NoGateway: true})
	src, reg := r.Sources, r.Registry
	for name, call := range map[string]func(context.Context) error{
		"ListSources": func(ctx context.Context) error { _, err := src.ListSources(ctx, &pb.ListSourcesRequest{}); return err },
		"ListSkills":  func(ctx context.Context) error { _, err := src.ListSkills(ctx, &pb.ListSkillsRequest{}); return err },
	} {
		err := call(inproc.Bearer(agentSecret))
		want := `token "agent" may not call /toolnexus.v1.SourceService/` + name + `: it needs "admin": true in auth.tokens (SourceService is for operators: agent tokens neither reload the server nor read its sources and paths)`
		if status.Code(err) != codes.PermissionDenied || status.Convert(err).Message() != want {
			t.Errorf("%s as the agent: %v\nwant PermissionDenied: %s", name, err, want)
		}
		if err := call(inproc.Bearer(adminSecret)); err != nil {
			t.Errorf("%s as the admin: %v", name, err)
		}
	}
	p, err := reg.GetSkillsPrompt(inproc.Bearer(agentSecret), &pb.GetSkillsPromptRequest{})
	if err != nil || p.GetPrompt() != "No skills are currently available." {
		t.Fatalf("skills prompt for a token without the skill tool: %q %v", p.GetPrompt(), err)
	}
	p, err = reg.GetSkillsPrompt(inproc.Bearer(adminSecret), &pb.GetSkillsPromptRequest{})
	if err != nil || !strings.Contains(p.GetPrompt(), "secret-skill") {
		t.Fatalf("skills prompt for the admin: %q %v", p.GetPrompt(), err)
	}
}
