package core_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/inproc"
	"github.com/toolnexus/toolnexus/pkg/sources/builtin"
)

// twoPrincipals serves the builtins to agent-a, agent-b and the admin ops.
func twoPrincipals(t *testing.T, extra string) *inproc.Rig {
	t.Helper()
	testutil.SetTwoPrincipalsEnv(t)
	return inproc.Serve(t, testutil.TwoPrincipalsConfig(extra))
}

const sessionsConfig = `{"skills": [], "builtins": {"tools": {"webfetch": false}}}`

func TestSessionsTwoSessionsSamePathEachReadsItsOwn(t *testing.T) {
	t.Parallel()
	f := inproc.Serve(t, sessionsConfig)
	for _, id := range []string{"alpha", "beta"} {
		if r := inproc.ExecIn(t, inproc.InSession("", id), f.Registry, "write", map[string]any{"path": "notes/plan.md", "content": "plan of " + id}); r.GetIsError() {
			t.Fatal(r.GetOutput())
		}
	}
	for _, id := range []string{"alpha", "beta"} {
		if r := inproc.ExecIn(t, inproc.InSession("", id), f.Registry, "read", map[string]any{"path": "notes/plan.md"}); r.GetOutput() != "plan of "+id {
			t.Errorf("session %s reads %q", id, r.GetOutput())
		}
		if r := inproc.ExecIn(t, inproc.InSession("", id), f.Registry, "bash", map[string]any{"command": "cat notes/plan.md; ls"}); r.GetOutput() != "plan of "+id+"notes\n" {
			t.Errorf("session %s's bash sees %q", id, r.GetOutput())
		}
	}
	// No key: the shared workspace, which sees none of it.
	if r := f.Execute(t, context.Background(), "read", `{"path":"notes/plan.md"}`); !r.GetIsError() {
		t.Errorf("the shared workspace reads a session's file: %q", r.GetOutput())
	}
	if r := f.Execute(t, context.Background(), "glob", `{"pattern":"**/*.md"}`); r.GetOutput() != "" {
		t.Errorf("the shared workspace lists session files: %q", r.GetOutput())
	}
	// A call to no tool opens no session.
	if r := inproc.ExecIn(t, inproc.InSession("", "ghost"), f.Registry, "no_such_tool", map[string]any{}); !r.GetIsError() {
		t.Fatal("an unknown tool succeeded")
	}
	if got := inproc.SessionIDs(t, context.Background(), f.Conn); strings.Join(got, ",") != "anonymous/alpha,anonymous/beta" {
		t.Errorf("ListSessions = %v", got)
	}
	body := f.Scrape(t)
	if !strings.Contains(body, "\ntoolnexus_sessions 2\n") || !strings.Contains(body, "\ntoolnexus_session_bytes 25\n") {
		t.Errorf("session metrics:\n%s", grepLines(body, "toolnexus_session"))
	}
}

func grepLines(body, prefix string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestSessionsTwoPrincipalsSameIDAreIsolated(t *testing.T) {
	s := twoPrincipals(t, "")
	conn := s.Conn
	reg := pb.NewRegistryServiceClient(conn)
	a, b := inproc.InSession(testutil.TokA, "work"), inproc.InSession(testutil.TokB, "work")
	if r := inproc.ExecIn(t, a, reg, "write", map[string]any{"path": "secret.txt", "content": "a's secret"}); r.GetIsError() {
		t.Fatal(r.GetOutput())
	}
	if r := inproc.ExecIn(t, b, reg, "read", map[string]any{"path": "secret.txt"}); !r.GetIsError() {
		t.Fatalf("agent-b reads agent-a's file in the same session id: %q", r.GetOutput())
	}
	// Where agent-a's workspace is, seen from agent-b's: two levels up.
	aDir := filepath.Join(filepath.Dir(s.ConfigPath), "ws.sessions", "u-agent-a", "work")
	if _, err := os.Stat(filepath.Join(aDir, "secret.txt")); err != nil {
		t.Fatalf("agent-a's file is not where the layout says: %v", err)
	}
	attacks := []struct{ tool, args string }{
		{"read", `{"path": "../../u-agent-a/work/secret.txt"}`},
		{"read", `{"path": "` + aDir + `/secret.txt"}`},
		{"write", `{"path": "../../u-agent-a/work/secret.txt", "content": "overwritten"}`},
		{"edit", `{"path": "../../u-agent-a/work/secret.txt", "oldString": "a", "newString": "b"}`},
		{"grep", `{"pattern": "secret", "path": "../../u-agent-a"}`},
		{"glob", `{"pattern": "*", "path": "` + aDir + `"}`},
		{"bash", `{"command": "pwd", "workdir": "../../u-agent-a/work"}`},
		{"apply_patch", `{"patchText": "*** Begin Patch\n*** Delete File: ../../u-agent-a/work/secret.txt\n*** End Patch"}`},
	}
	for _, at := range attacks {
		var args map[string]any
		if err := json.Unmarshal([]byte(at.args), &args); err != nil {
			t.Fatal(err)
		}
		if r := inproc.ExecIn(t, b, reg, at.tool, args); !r.GetIsError() || !strings.Contains(r.GetOutput(), "escapes the workspace") {
			t.Errorf("agent-b %s %s: %v %q", at.tool, at.args, r.GetIsError(), r.GetOutput())
		}
	}
	// A symlink agent-b plants (with bash) toward agent-a's files is
	// refused by every file tool where it lands.
	if r := inproc.ExecIn(t, b, reg, "bash", map[string]any{"command": "ln -s ../../u-agent-a/work peek && ln -s " + aDir + "/secret.txt abs"}); r.GetIsError() {
		t.Fatal(r.GetOutput())
	}
	for _, p := range []string{"peek/secret.txt", "abs"} {
		if r := inproc.ExecIn(t, b, reg, "read", map[string]any{"path": p}); !r.GetIsError() {
			t.Errorf("agent-b reads %s through a symlink: %q", p, r.GetOutput())
		}
		if r := inproc.ExecIn(t, b, reg, "write", map[string]any{"path": p, "content": "x"}); !r.GetIsError() {
			t.Errorf("agent-b writes %s through a symlink", p)
		}
	}
	if r := inproc.ExecIn(t, b, reg, "grep", map[string]any{"pattern": "secret"}); r.GetOutput() != "" {
		t.Errorf("agent-b's grep follows a symlink out: %q", r.GetOutput())
	}
	if got, _ := os.ReadFile(filepath.Join(aDir, "secret.txt")); string(got) != "a's secret" {
		t.Fatalf("agent-a's file is now %q", got)
	}
	if r := inproc.ExecIn(t, a, reg, "read", map[string]any{"path": "secret.txt"}); r.GetOutput() != "a's secret" {
		t.Fatalf("agent-a reads %q", r.GetOutput())
	}
}

func TestSessionsListAndDeleteAuthMatrix(t *testing.T) {
	conn := twoPrincipals(t, "").Conn
	reg := pb.NewRegistryServiceClient(conn)
	sc := pb.NewSessionServiceClient(conn)
	for _, c := range []struct{ tok, id string }{{testutil.TokA, "s1"}, {testutil.TokB, "s1"}, {testutil.TokB, "s2"}} {
		if r := inproc.ExecIn(t, inproc.InSession(c.tok, c.id), reg, "write", map[string]any{"path": "f", "content": "12345"}); r.GetIsError() {
			t.Fatal(r.GetOutput())
		}
	}
	lists := map[string]string{testutil.TokA: "agent-a/s1", testutil.TokB: "agent-b/s1,agent-b/s2", testutil.TokO: "agent-a/s1,agent-b/s1,agent-b/s2"}
	for tok, want := range lists {
		if got := strings.Join(inproc.SessionIDs(t, inproc.Bearer(tok), conn), ","); got != want {
			t.Errorf("ListSessions as %s = %s, want %s", tok[:7], got, want)
		}
	}
	resp, err := sc.ListSessions(inproc.Bearer(testutil.TokA), &pb.ListSessionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if s := resp.GetSessions()[0]; s.GetBytes() != 5 || s.GetCreatedAt().AsTime().IsZero() || s.GetLastUsedAt().AsTime().Before(s.GetCreatedAt().AsTime()) {
		t.Errorf("session row %v", s)
	}
	if _, err := sc.ListSessions(context.Background(), &pb.ListSessionsRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Errorf("ListSessions without a token: %v", err)
	}

	del := func(ctx context.Context, id, principal string) codes.Code {
		_, err := sc.DeleteSession(ctx, &pb.DeleteSessionRequest{Id: id, Principal: principal})
		return status.Code(err)
	}
	cases := []struct {
		who, tok, id, principal string
		want                    codes.Code
	}{
		{"no token", "", "s1", "", codes.Unauthenticated},
		{"agent-a, agent-b's session by id", testutil.TokA, "s2", "", codes.NotFound},
		{"agent-a naming agent-b", testutil.TokA, "s1", "agent-b", codes.PermissionDenied},
		{"agent-a, a bad id", testutil.TokA, "../s1", "", codes.InvalidArgument},
		{"agent-a, no id", testutil.TokA, "", "", codes.InvalidArgument},
		{"agent-a naming itself", testutil.TokA, "s1", "agent-a", codes.OK},
		{"agent-a, already gone", testutil.TokA, "s1", "", codes.NotFound},
		{"admin, agent-b's", testutil.TokO, "s2", "agent-b", codes.OK},
		{"admin, its own (none)", testutil.TokO, "s1", "", codes.NotFound},
		{"agent-b, its own", testutil.TokB, "s1", "", codes.OK},
	}
	for _, c := range cases {
		ctx := context.Background()
		if c.tok != "" {
			ctx = inproc.Bearer(c.tok)
		}
		if got := del(ctx, c.id, c.principal); got != c.want {
			t.Errorf("%s: %v, want %v", c.who, got, c.want)
		}
	}
	if got := inproc.SessionIDs(t, inproc.Bearer(testutil.TokO), conn); len(got) != 0 {
		t.Errorf("left after the deletes: %v", got)
	}
	// The deleted session starts empty.
	if r := inproc.ExecIn(t, inproc.InSession(testutil.TokA, "s1"), reg, "read", map[string]any{"path": "f"}); !r.GetIsError() {
		t.Errorf("a deleted session's file is back: %q", r.GetOutput())
	}
}

func TestSessionsBadIDsAndRequired(t *testing.T) {
	t.Parallel()
	f := inproc.Serve(t, `{"skills": [], "debug": true, "sessions": {"required": true}}`)
	for _, id := range []string{"..", ".", "a/b", "../../etc", strings.Repeat("x", 65), "a b", "a:b", "~x"} {
		_, err := f.Registry.Execute(inproc.InSession("", id), &pb.ExecuteRequest{Name: "debug_echo"})
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "1 to 64 characters") {
			t.Errorf("session %q: %v", id, err)
		}
		if _, err := f.Registry.ListTools(inproc.InSession("", id), &pb.ListToolsRequest{}); status.Code(err) != codes.InvalidArgument {
			t.Errorf("ListTools with session %q: %v", id, err)
		}
	}
	_, err := f.Registry.Execute(context.Background(), &pb.ExecuteRequest{Name: "debug_echo"})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "sessions.required") ||
		!strings.Contains(status.Convert(err).Message(), "toolnexus-session") {
		t.Errorf("no session under sessions.required: %v", err)
	}
	stream, err := f.Registry.ExecuteStream(context.Background(), &pb.ExecuteRequest{Name: "debug_echo"})
	if err == nil {
		_, err = stream.Recv()
	}
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("ExecuteStream without a session under sessions.required: %v", err)
	}
	// Only calls need one.
	if _, err := f.Registry.ListTools(context.Background(), &pb.ListToolsRequest{}); err != nil {
		t.Errorf("ListTools without a session: %v", err)
	}
	if r := inproc.ExecIn(t, inproc.InSession("", "ok-1.2_3"), f.Registry, "debug_echo", map[string]any{"message": "hi"}); r.GetIsError() {
		t.Errorf("a good id: %q", r.GetOutput())
	}
}

func TestSessionsQuota(t *testing.T) {
	t.Parallel()
	f := inproc.Serve(t, `{"skills": [], "sessions": {"maxBytes": 1000}}`)
	ctx := inproc.InSession("", "q")
	r := inproc.ExecIn(t, ctx, f.Registry, "write", map[string]any{"path": "big", "content": strings.Repeat("x", 1001)})
	if !r.GetIsError() || !strings.Contains(r.GetOutput(), "write: the session's workspace quota would be exceeded") || !strings.Contains(r.GetOutput(), "sessions.maxBytes") {
		t.Fatalf("a write past the quota: %v %q", r.GetIsError(), r.GetOutput())
	}
	// One file may not pass what is left: the shell's file-size limit.
	r = inproc.ExecIn(t, ctx, f.Registry, "bash", map[string]any{"command": "head -c 4096 /dev/zero > blob; wc -c < blob; rm blob"})
	if !strings.Contains(r.GetOutput(), "File size limit exceeded") || !strings.Contains(r.GetOutput(), "\n1024\n") {
		t.Fatalf("bash past the file-size limit: %q", r.GetOutput())
	}
	// Many files each under it: caught by the accounting after the call.
	r = inproc.ExecIn(t, ctx, f.Registry, "bash", map[string]any{"command": "for i in 1 2 3; do head -c 900 /dev/zero > f$i; done"})
	if r.GetIsError() {
		t.Fatalf("bash: %q", r.GetOutput())
	}
	for _, c := range []struct{ tool, args string }{
		{"write", `{"path": "small", "content": "x"}`},
		{"apply_patch", `{"patchText": "*** Begin Patch\n*** Add File: p\n+x\n*** End Patch"}`},
		{"bash", `{"command": "echo x > small"}`},
	} {
		var args map[string]any
		_ = json.Unmarshal([]byte(c.args), &args)
		if r := inproc.ExecIn(t, ctx, f.Registry, c.tool, args); !r.GetIsError() {
			t.Errorf("%s in a session over its quota: %q", c.tool, r.GetOutput())
		} else if c.tool != "bash" && !strings.Contains(r.GetOutput(), "over its quota: 2700 of 1000 bytes") {
			t.Errorf("%s: %q", c.tool, r.GetOutput())
		}
	}
	// Reading still works, and shrinking lets writes in again.
	if r := inproc.ExecIn(t, ctx, f.Registry, "bash", map[string]any{"command": "wc -c < f1; rm f2 f3"}); r.GetIsError() || strings.TrimSpace(r.GetOutput()) != "900" {
		t.Fatalf("bash in a session over its quota: %q", r.GetOutput())
	}
	if r := inproc.ExecIn(t, ctx, f.Registry, "write", map[string]any{"path": "small", "content": "x"}); r.GetIsError() {
		t.Fatalf("a write after shrinking: %q", r.GetOutput())
	}
}

// holdInSession starts a bash call in session id that runs until the file
// "release" appears in its workspace, then prints "released". It returns
// the channel the call's result arrives on.
func holdInSession(t *testing.T, f *inproc.Rig, id string) <-chan *pb.ToolResult {
	t.Helper()
	out := make(chan *pb.ToolResult, 1)
	go func() {
		resp, err := f.Registry.Execute(inproc.InSession("", id), &pb.ExecuteRequest{Name: "bash",
			Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{"command": "touch started; while [ ! -e release ]; do sleep 0.01; done; echo released"}`}})
		if err != nil {
			t.Errorf("held call: %v", err)
			out <- nil
			return
		}
		out <- resp.GetResult()
	}()
	f.WaitInFlight(t, "builtin")
	return out
}

// waitGone waits until ListSessions no longer shows the session: the
// janitor runs on its own clock.
func waitGone(t *testing.T, conn *grpc.ClientConn, id string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		found := false
		for _, s := range inproc.SessionIDs(t, context.Background(), conn) {
			found = found || s == "anonymous/"+id
		}
		if !found {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("session %s never expired", id)
}

func TestSessionsExpireWhenIdleButNeverDuringACall(t *testing.T) {
	t.Parallel()
	f := inproc.Serve(t, `{"skills": [], "sessions": {"idleTimeout": 50}}`)
	held := holdInSession(t, f, "held")
	if r := inproc.ExecIn(t, inproc.InSession("", "brief"), f.Registry, "write", map[string]any{"path": "f", "content": "x"}); r.GetIsError() {
		t.Fatal(r.GetOutput())
	}
	// "brief" was used after "held" started; once it has expired, the
	// janitor has looked at "held" after its idle timeout too.
	waitGone(t, f.Conn, "brief")
	if r := inproc.ExecIn(t, inproc.InSession("", "brief"), f.Registry, "read", map[string]any{"path": "f"}); !r.GetIsError() {
		t.Fatalf("an expired session's file is still there: %q", r.GetOutput())
	}
	ids := strings.Join(inproc.SessionIDs(t, context.Background(), f.Conn), ",")
	if !strings.Contains(ids, "anonymous/held") {
		t.Fatalf("a session with a running call expired: %s", ids)
	}
	// Release it from outside the call: the held call still has its
	// workspace and finishes normally.
	ws := filepath.Join(filepath.Dir(f.ConfigPath), "ws.sessions", "anonymous", "held")
	if err := os.WriteFile(filepath.Join(ws, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := <-held; r == nil || r.GetIsError() || r.GetOutput() != "released\n" {
		t.Fatalf("held call: %v", r)
	}
	waitGone(t, f.Conn, "held")
	if _, err := os.Stat(ws); !os.IsNotExist(err) {
		t.Fatalf("the expired workspace is still on disk: %v", err)
	}
}

func TestSessionsDeleteRefusedWhileACallRuns(t *testing.T) {
	t.Parallel()
	f := inproc.Serve(t, `{"skills": []}`)
	held := holdInSession(t, f, "busy")
	sc := pb.NewSessionServiceClient(f.Conn)
	_, err := sc.DeleteSession(context.Background(), &pb.DeleteSessionRequest{Id: "busy"})
	if status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("DeleteSession during a call: %v", err)
	}
	if r := inproc.ExecIn(t, inproc.InSession("", "busy"), f.Registry, "write", map[string]any{"path": "release", "content": ""}); r.GetIsError() {
		t.Fatal(r.GetOutput())
	}
	if r := <-held; r == nil || r.GetIsError() {
		t.Fatalf("held call: %v", r)
	}
	if _, err := sc.DeleteSession(context.Background(), &pb.DeleteSessionRequest{Id: "busy"}); err != nil {
		t.Fatalf("DeleteSession after the call: %v", err)
	}
}

// ExecuteStream runs in the session its metadata names, like Execute.
func TestSessionsExecuteStream(t *testing.T) {
	t.Parallel()
	f := inproc.Serve(t, sessionsConfig)
	stream, err := f.Registry.ExecuteStream(inproc.InSession("", "streamed"), &pb.ExecuteRequest{Name: "bash",
		Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{"command": "echo from the stream > s.txt; pwd"}`}})
	if err != nil {
		t.Fatal(err)
	}
	var res *pb.ToolResult
	for {
		ev, err := stream.Recv()
		if err != nil {
			break
		}
		if r := ev.GetResult(); r != nil {
			res = r
		}
	}
	if res == nil || res.GetIsError() || !strings.HasSuffix(strings.TrimSpace(res.GetOutput()), filepath.Join("ws.sessions", "anonymous", "streamed")) {
		t.Fatalf("streamed call: %v", res)
	}
	if r := inproc.ExecIn(t, inproc.InSession("", "streamed"), f.Registry, "read", map[string]any{"path": "s.txt"}); r.GetOutput() != "from the stream\n" {
		t.Fatalf("Execute in the same session reads %q", r.GetOutput())
	}
	if r := f.Execute(t, context.Background(), "read", `{"path": "s.txt"}`); !r.GetIsError() {
		t.Fatalf("the shared workspace reads the streamed session's file: %q", r.GetOutput())
	}
}

func TestSessionsCapPerPrincipal(t *testing.T) {
	t.Parallel()
	f := inproc.Serve(t, `{"skills": [], "debug": true, "sessions": {"max": 1}}`)
	if r := inproc.ExecIn(t, inproc.InSession("", "one"), f.Registry, "debug_echo", map[string]any{"message": "x"}); r.GetIsError() {
		t.Fatal(r.GetOutput())
	}
	r := inproc.ExecIn(t, inproc.InSession("", "two"), f.Registry, "debug_echo", map[string]any{"message": "x"})
	if !r.GetIsError() || r.GetOutcome() != pb.Outcome_OUTCOME_DENIED || !strings.Contains(r.GetOutput(), "sessions.max") {
		t.Fatalf("a second session over sessions.max = 1: %v", r)
	}
	if r := inproc.ExecIn(t, inproc.InSession("", "one"), f.Registry, "debug_echo", map[string]any{"message": "x"}); r.GetIsError() {
		t.Fatalf("the existing session: %s", r.GetOutput())
	}
}

// Two principals with one session id, through bash: the sandbox confines
// each command to its own session's directory.
func TestSessionsTwoPrincipalsSameIDBashIsolated(t *testing.T) {
	s := twoPrincipals(t, "")
	conn := s.Conn
	src, err := pb.NewSourceServiceClient(conn).ListSources(inproc.Bearer(testutil.TokO), &pb.ListSourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range src.GetSandbox().GetLayers() {
		if l.GetName() == "landlock" && !l.GetActive() {
			t.Skipf("the sandbox's landlock layer is missing here (%s): bash is not confined, the attack is not run", l.GetDetail())
		}
	}
	reg := pb.NewRegistryServiceClient(conn)
	if r := inproc.ExecIn(t, inproc.InSession(testutil.TokA, "work"), reg, "bash", map[string]any{"command": "echo a-secret > secret.txt"}); r.GetIsError() {
		t.Fatal(r.GetOutput())
	}
	aDir := filepath.Join(filepath.Dir(s.ConfigPath), "ws.sessions", "u-agent-a", "work")
	for _, cmd := range []string{
		"cat ../../u-agent-a/work/secret.txt",
		"cat " + aDir + "/secret.txt",
		"echo planted > ../../u-agent-a/work/planted",
		"ln -s ../../u-agent-a/work peek && cat peek/secret.txt",
		"rm -r ../../u-agent-a/work", // without -f: a path that is not there fails
	} {
		r := inproc.ExecIn(t, inproc.InSession(testutil.TokB, "work"), reg, "bash", map[string]any{"command": cmd})
		if !r.GetIsError() || strings.Contains(r.GetOutput(), "a-secret") {
			t.Errorf("agent-b: %s: %v %q", cmd, r.GetIsError(), r.GetOutput())
		}
	}
	if got, err := os.ReadFile(filepath.Join(aDir, "secret.txt")); err != nil || string(got) != "a-secret\n" {
		t.Fatalf("agent-a's file: %q %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(aDir, "planted")); err == nil {
		t.Fatal("agent-b planted a file in agent-a's workspace")
	}
}

// A call without a session works in the shared workspace, which its bash
// may read and write whole; the sessions live beside it, not in it, so
// neither bash nor the file tools reach another session's files from
// there — not by a relative path, an absolute one or a listing.
func TestSessionsOutOfReachOfTheSharedWorkspace(t *testing.T) {
	s := twoPrincipals(t, "")
	conn := s.Conn
	reg := pb.NewRegistryServiceClient(conn)
	if r := inproc.ExecIn(t, inproc.InSession(testutil.TokA, "work"), reg, "write", map[string]any{"path": "secret.txt", "content": "a-secret\n"}); r.GetIsError() {
		t.Fatal(r.GetOutput())
	}
	root := filepath.Join(filepath.Dir(s.ConfigPath), "ws.sessions")
	aFile := filepath.Join(root, "u-agent-a", "work", "secret.txt")
	if got, err := os.ReadFile(aFile); err != nil || string(got) != "a-secret\n" {
		t.Fatalf("agent-a's file is not at %s: %q %v", aFile, got, err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(s.ConfigPath), "ws", builtin.SessionsDir)); err == nil {
		t.Fatal("the sessions still live inside the shared workspace")
	}
	sandboxed := false
	src, err := pb.NewSourceServiceClient(conn).ListSources(inproc.Bearer(testutil.TokO), &pb.ListSourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range src.GetSandbox().GetLayers() {
		if l.GetName() == "landlock" {
			sandboxed = l.GetActive()
		}
	}
	// The file tools: the workspace's os.Root ends at the workspace.
	for _, attack := range []struct{ tool, args string }{
		{"read", `{"path": "../ws.sessions/u-agent-a/work/secret.txt"}`},
		{"read", `{"path": "` + aFile + `"}`},
		{"glob", `{"pattern": "**/secret.txt", "path": "../ws.sessions"}`},
		{"grep", `{"pattern": "a-secret", "path": "` + root + `"}`},
		{"write", `{"path": "../ws.sessions/u-agent-a/work/secret.txt", "content": "overwritten"}`},
	} {
		var args map[string]any
		if err := json.Unmarshal([]byte(attack.args), &args); err != nil {
			t.Fatal(err)
		}
		r := inproc.ExecIn(t, inproc.Bearer(testutil.TokB), reg, attack.tool, args)
		if !r.GetIsError() || strings.Contains(r.GetOutput(), "a-secret") {
			t.Errorf("sessionless %s %s: %v %q", attack.tool, attack.args, r.GetIsError(), r.GetOutput())
		}
	}
	if !sandboxed {
		t.Log("the sandbox's landlock layer is missing here: the bash attacks are not run")
	} else {
		for _, cmd := range []string{
			"cat ../ws.sessions/u-agent-a/work/secret.txt",
			"cat " + aFile,
			"ls " + root,
			"ls ../ws.sessions/u-agent-a",
			"echo planted > " + filepath.Join(root, "u-agent-a", "work", "planted"),
		} {
			r := inproc.ExecIn(t, inproc.Bearer(testutil.TokB), reg, "bash", map[string]any{"command": cmd})
			if !r.GetIsError() || strings.Contains(r.GetOutput(), "a-secret") || strings.Contains(r.GetOutput(), "u-agent-a\n") {
				t.Errorf("sessionless bash: %s: %v %q", cmd, r.GetIsError(), r.GetOutput())
			} else if !strings.Contains(r.GetOutput(), "Permission denied") && !strings.Contains(r.GetOutput(), "No such file") {
				t.Errorf("sessionless bash: %s: refused, but not by the kernel: %q", cmd, r.GetOutput())
			}
		}
	}
	if got, err := os.ReadFile(aFile); err != nil || string(got) != "a-secret\n" {
		t.Fatalf("agent-a's file after the attacks: %q %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(root, "u-agent-a", "work", "planted")); err == nil {
		t.Fatal("a sessionless call planted a file in agent-a's session")
	}
}
