package main

import (
	"strings"
	"testing"
)

// --session and TOOLNEXUS_SESSION put calls in a session's own workspace;
// sessions and delete-session manage them.
func TestSessionFlagAndCommands(t *testing.T) {
	srv := startServer(t, `{"skills": []}`)
	against(t, srv, "--session", "plan-42", "exec", "write", "--args", `{"path": "notes.md", "content": "step 1"}`).want(t, 0)
	if out := against(t, srv, "--session", "plan-42", "exec", "read", "--args", `{"path": "notes.md"}`).want(t, 0).stdout; !strings.Contains(out, "step 1") {
		t.Fatalf("read in the session: %q", out)
	}
	against(t, srv, "exec", "read", "--args", `{"path": "notes.md"}`).want(t, 1) // the shared workspace has no such file
	t.Setenv("TOOLNEXUS_SESSION", "plan-42")
	if out := against(t, srv, "exec", "read", "--args", `{"path": "notes.md"}`).want(t, 0).stdout; !strings.Contains(out, "step 1") {
		t.Fatalf("read with TOOLNEXUS_SESSION: %q", out)
	}
	t.Setenv("TOOLNEXUS_SESSION", "")

	out := against(t, srv, "sessions").want(t, 0).stdout
	if !strings.Contains(out, "PRINCIPAL") || !strings.Contains(out, "anonymous") || !strings.Contains(out, "plan-42") {
		t.Fatalf("sessions:\n%s", out)
	}
	if r := against(t, srv, "--session", "../x", "exec", "read", "--args", `{"path": "a"}`).want(t, 1); !strings.Contains(r.stderr, "1 to 64 characters") {
		t.Fatalf("a bad --session: %q", r.stderr)
	}
	against(t, srv, "delete-session", "plan-42").want(t, 0)
	if r := against(t, srv, "delete-session", "plan-42").want(t, 1); !strings.Contains(r.stderr, "NotFound") && !strings.Contains(r.stderr, "no session") {
		t.Fatalf("deleting it again: %q", r.stderr)
	}
	if out := against(t, srv, "sessions").want(t, 0).stdout; !strings.Contains(out, "No sessions.") {
		t.Fatalf("sessions after the delete:\n%s", out)
	}
}
