package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// One approval through the CLI: the agent's write outside docs/ is held
// back, approvals lists it for ops, approve lets it run once, and the
// agent's resumed call writes the file; the agent cannot approve itself.
func TestApprovalCommands(t *testing.T) {
	dir := t.TempDir()
	pol := `@id("everything") permit(principal, action, resource);
@id("writes-outside-docs") @approval("required")
permit(principal, action, resource == Tool::"write") when { !(context.arguments.path like "docs/*") };`
	if err := os.WriteFile(filepath.Join(dir, "p.cedar"), []byte(pol), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServerIn(t, dir, `{"skills": [], "policy": {"files": ["p.cedar"]},
		"auth": {"tokens": [{"name": "agent", "token": "cli-agent-token-1"}, {"name": "ops", "token": "cli-ops-token-2", "admin": true}]}}`)
	args := `{"path": "out.txt", "content": "ok"}`
	held := against(t, srv, "--token", "cli-agent-token-1", "exec", "write", "--args", args)
	id := regexp.MustCompile(`apr_[A-Z0-9]+`).FindString(held.stdout + held.stderr)
	if id == "" {
		t.Fatalf("no approval id in:\n%s\n%s", held.stdout, held.stderr)
	}
	if !strings.Contains(held.stdout, "--answer-id "+id+" --answer true") {
		t.Fatalf("the pending output does not show how to resume:\n%s", held.stdout)
	}
	if out := against(t, srv, "--token", "cli-ops-token-2", "approvals").want(t, 0).stdout; !strings.Contains(out, id) || !strings.Contains(out, "pending") || !strings.Contains(out, "writes-outside-docs") {
		t.Fatalf("approvals:\n%s", out)
	}
	if r := against(t, srv, "--token", "cli-agent-token-1", "approve", id); r.code == 0 || !strings.Contains(r.stderr, "PermissionDenied") && !strings.Contains(r.stderr, "approve") {
		t.Fatalf("the agent approved its own call: %+v", r)
	}
	if out := against(t, srv, "--token", "cli-ops-token-2", "approve", id, "--reason", "fine").want(t, 0).stdout; !strings.HasPrefix(out, "approved "+id) {
		t.Fatalf("approve: %q", out)
	}
	against(t, srv, "--token", "cli-agent-token-1", "exec", "write", "--args", args, "--answer", "true", "--answer-id", id).want(t, 0)
	if b, err := os.ReadFile(filepath.Join(dir, "out.txt")); err != nil || string(b) != "ok" {
		t.Fatalf("%q %v", b, err)
	}
	if r := against(t, srv, "--token", "cli-agent-token-1", "exec", "write", "--args", args, "--answer", "true", "--answer-id", id).want(t, 1); !strings.Contains(r.stdout+r.stderr, "already used") {
		t.Fatalf("replay: %+v", r)
	}
	if out := against(t, srv, "--token", "cli-ops-token-2", "deny", "apr_NOPE").stderr; !strings.Contains(out, "no such approval") {
		t.Fatalf("deny unknown: %q", out)
	}
}
