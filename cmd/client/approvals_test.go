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

// The "To answer, run:" hint is the exact command that resumes a held
// call, given only the token in TOOLNEXUS_TOKEN: it carries the session
// (an approval is bound to it; the hint dropped it and was refused, "the
// approval is for another session") and the address, whether they came as
// flags or from the environment, and says where the token comes from.
func TestAnswerHintResumesTheHeldCall(t *testing.T) {
	dir := t.TempDir()
	pol := `@id("everything") permit(principal, action, resource);
@id("writes-need-approval") @approval("required") permit(principal, action, resource == Tool::"write");`
	if err := os.WriteFile(filepath.Join(dir, "p.cedar"), []byte(pol), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := startServerIn(t, dir, `{"skills": [], "policy": {"files": ["p.cedar"]},
		"auth": {"tokens": [{"name": "agent", "token": "hint-agent-token-1"}, {"name": "ops", "token": "hint-ops-token-2", "admin": true}]}}`)
	addr := srv.Addr().String()
	for _, tc := range []struct {
		name, source string
		env          map[string]string
		args         []string
	}{
		{"flags", "first put the token you gave --token in TOOLNEXUS_TOKEN", nil,
			[]string{"--addr", addr, "--token", "hint-agent-token-1", "--session", "plan-7"}},
		{"environment", "with the token in TOOLNEXUS_TOKEN", map[string]string{
			"TOOLNEXUS_ADDR": addr, "TOOLNEXUS_TOKEN": "hint-agent-token-1", "TOOLNEXUS_SESSION": "plan-8"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"TOOLNEXUS_ADDR", "TOOLNEXUS_TOKEN", "TOOLNEXUS_SESSION"} {
				t.Setenv(k, tc.env[k])
			}
			file := "held-" + tc.name + ".txt"
			held := runCLI(t, "", append(tc.args, "exec", "write", "--args", `{"path": "`+file+`", "content": "ok"}`)...).want(t, 1)
			header, hint, ok := strings.Cut(held.stdout, ":\n  toolnexus ")
			if !ok || !strings.Contains(header, "To answer, run ("+tc.source) {
				t.Fatalf("no hint naming the token's source (%q):\n%s", tc.source, held.stdout)
			}
			if strings.Contains(held.stdout, "hint-agent-token-1") {
				t.Fatalf("the hint shows the token:\n%s", held.stdout)
			}
			id := regexp.MustCompile(`apr_[A-Z0-9]+`).FindString(held.stdout)
			runCLI(t, "", "--addr", addr, "--token", "hint-ops-token-2", "approve", id).want(t, 0)
			// The hint, run where nothing but the token is set.
			t.Setenv("TOOLNEXUS_ADDR", "")
			t.Setenv("TOOLNEXUS_SESSION", "")
			t.Setenv("TOOLNEXUS_TOKEN", "hint-agent-token-1")
			words := shellSplit(strings.TrimSpace(strings.SplitN(hint, "\n", 2)[0]))
			r := runCLI(t, "", words...)
			if r.code != 0 {
				t.Fatalf("running the hint %q: exit %d\n%s%s", hint, r.code, r.stdout, r.stderr)
			}
			if matches, _ := filepath.Glob(filepath.Join(dir+".sessions", "*", "*", file)); len(matches) != 1 {
				t.Fatalf("the resumed write did not land in the session's workspace: %v", matches)
			}
		})
	}
}
