package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

func TestExecEcho(t *testing.T) {
	srv := startServer(t, debugOnly)
	addr := srv.Addr().String()
	// The arguments reach the tool verbatim: 1.50 stays 1.50.
	const args = `{"n":1.50,"s":"héllo"}`

	t.Run("args flag", func(t *testing.T) {
		r := against(t, srv, "exec", "debug_echo", "--args", args).want(t, 0)
		if r.stdout != args+"\n" || r.stderr != "" {
			t.Fatalf("stdout %q stderr %q", r.stdout, r.stderr)
		}
	})
	t.Run("flags before the name", func(t *testing.T) {
		r := against(t, srv, "exec", "--args", args, "debug_echo").want(t, 0)
		if r.stdout != args+"\n" {
			t.Fatalf("stdout %q", r.stdout)
		}
	})
	t.Run("stdin", func(t *testing.T) {
		r := runCLI(t, "  "+args+"\n", "--addr", addr, "exec", "debug_echo", "-").want(t, 0)
		if r.stdout != args+"\n" {
			t.Fatalf("stdout %q", r.stdout)
		}
	})
	t.Run("args file", func(t *testing.T) {
		f := filepath.Join(t.TempDir(), "args.json")
		if err := os.WriteFile(f, []byte(args), 0o600); err != nil {
			t.Fatal(err)
		}
		r := against(t, srv, "exec", "debug_echo", "--args-file", f).want(t, 0)
		if r.stdout != args+"\n" {
			t.Fatalf("stdout %q", r.stdout)
		}
	})
	t.Run("no args is an empty object", func(t *testing.T) {
		r := against(t, srv, "exec", "debug_echo").want(t, 0)
		if r.stdout != "{}\n" {
			t.Fatalf("stdout %q", r.stdout)
		}
	})
	t.Run("json", func(t *testing.T) {
		r := against(t, srv, "exec", "--json", "debug_echo", "--args", args).want(t, 0)
		var res pb.ToolResult
		if err := protojson.Unmarshal([]byte(r.stdout), &res); err != nil {
			t.Fatalf("not a ToolResult: %v\n%s", err, r.stdout)
		}
		if res.GetOutput() != args || res.GetIsError() || res.GetOutcome() != pb.Outcome_OUTCOME_OK {
			t.Fatalf("result %v", &res)
		}
		// Scripts can rely on is_error being present even when false.
		if !strings.Contains(r.stdout, `"is_error": false`) {
			t.Errorf("is_error missing:\n%s", r.stdout)
		}
	})
}

func TestExecErrorsExitOne(t *testing.T) {
	srv := startServer(t, debugOnly)

	r := against(t, srv, "exec", "debug_fail", "--args", `{"message":"disk full"}`).want(t, 1)
	if r.stdout != "" || r.stderr != "disk full\n" {
		t.Fatalf("debug_fail: stdout %q stderr %q", r.stdout, r.stderr)
	}

	r = against(t, srv, "exec", "no_such_tool").want(t, 1)
	if !strings.HasPrefix(r.stderr, "unknown tool: no_such_tool") {
		t.Fatalf("unknown tool: stderr %q", r.stderr)
	}

	r = against(t, srv, "exec", "debug_panic", "--args", `{"message":"kaboom"}`).want(t, 1)
	if !strings.Contains(r.stderr, "kaboom") {
		t.Fatalf("debug_panic: stderr %q", r.stderr)
	}

	// --json still exits 1, with the whole result on stdout.
	r = against(t, srv, "--json", "exec", "no_such_tool").want(t, 1)
	var res pb.ToolResult
	if err := protojson.Unmarshal([]byte(r.stdout), &res); err != nil || !res.GetIsError() || res.GetOutcome() != pb.Outcome_OUTCOME_UNKNOWN_TOOL {
		t.Fatalf("--json unknown tool: %v\n%s", err, r.stdout)
	}

	// A non-object is the server's invalid-arguments result, not a usage error.
	r = against(t, srv, "exec", "debug_echo", "--args", `[1,2]`).want(t, 1)
	if r.stderr == "" {
		t.Fatal("no explanation on stderr")
	}
}

func TestExecTimeoutIsAnRPCFailure(t *testing.T) {
	srv := startServer(t, debugOnly)
	r := against(t, srv, "--timeout", "100ms", "exec", "debug_sleep", "--args", `{"ms":600000}`).want(t, 1)
	if !strings.Contains(r.stderr, "toolnexus exec: DeadlineExceeded:") || !strings.Contains(r.stderr, "--timeout") {
		t.Fatalf("stderr %q", r.stderr)
	}
}

func TestExecRPCFailureNamesTheAddress(t *testing.T) {
	// A port that was free a moment ago: nothing listens there.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	r := runCLI(t, "", "--addr", addr, "exec", "debug_echo").want(t, 1)
	if !strings.Contains(r.stderr, "toolnexus exec: Unavailable:") || !strings.Contains(r.stderr, "listening at "+addr+"?") {
		t.Fatalf("stderr %q", r.stderr)
	}
}

// askTool suspends until answered, like the builtin question tool, and
// reports exactly what answer it received.
func askTool() tool.Tool {
	return tool.Must(tool.New("ask", func(_ context.Context, call tool.Call) tool.Result {
		if call.Answer == nil {
			return tool.Suspend(tool.Pending{
				ID:     "req-1",
				Kind:   "question",
				Prompt: "Pick a color? (options: red, green)\nConfirm?",
				Data: map[string]any{"questions": []any{
					map[string]any{"question": "Pick a color?", "options": []any{"red", "green"}},
					map[string]any{"question": "Confirm?"},
				}},
			})
		}
		a := call.Answer
		b, _ := json.Marshal(map[string]any{"id": a.ID, "ok": a.OK, "data": a.Data, "reason": a.Reason, "args": json.RawMessage(call.Arguments)})
		return tool.Success(string(b), nil)
	}))
}

func TestExecPendingAndAnswer(t *testing.T) {
	srv := startServer(t, debugOnly, askTool())
	addr := srv.Addr().String()

	r := against(t, srv, "exec", "ask", "--args", `{"topic":"it's"}`).want(t, 1)
	for _, want := range []string{
		"PENDING: ask waits for question (id req-1)\n",
		"  Pick a color? (options: red, green)\n  Confirm?\n",
		"To answer, run:\n  toolnexus --addr " + addr + ` exec ask --args '{"topic":"it'\''s"}' --answer-id req-1 --answer '{"answers":["red","YOUR ANSWER"]}'` + "\n",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("pending output lacks %q:\n%s", want, r.stdout)
		}
	}

	// The command the hint shows resumes the call.
	r = against(t, srv, "exec", "ask", "--args", `{"topic":"it's"}`, "--answer-id", "req-1", "--answer", `{"answers":["red","yes"]}`).want(t, 0)
	want := `{"args":{"topic":"it's"},"data":{"answers":["red","yes"]},"id":"req-1","ok":true,"reason":""}` + "\n"
	if r.stdout != want {
		t.Fatalf("answered: stdout %q, want %q", r.stdout, want)
	}

	r = against(t, srv, "exec", "ask", "--decline", "not now").want(t, 0)
	if !strings.Contains(r.stdout, `"ok":false`) || !strings.Contains(r.stdout, `"reason":"not now"`) {
		t.Fatalf("declined: stdout %q", r.stdout)
	}

	// --json shows the pending request for a program to handle.
	r = against(t, srv, "--json", "exec", "ask").want(t, 1)
	var res pb.ToolResult
	if err := protojson.Unmarshal([]byte(r.stdout), &res); err != nil || res.GetOutcome() != pb.Outcome_OUTCOME_PENDING || res.GetPending().GetId() != "req-1" {
		t.Fatalf("--json pending: %v\n%s", err, r.stdout)
	}
}

func TestExecRequestFromFlags(t *testing.T) {
	// The request exec builds, without a server: answer, decline, arguments.
	cases := []struct {
		args []string
		want string // protojson of the request
	}{
		{[]string{"q", "--answer", `{"answers":["red"]}`, "--answer-id", "p1"},
			`{"name":"q","answer":{"id":"p1","ok":true,"data":{"answers":["red"]}}}`},
		{[]string{"q", "--answer", `"yes"`}, `{"name":"q","answer":{"ok":true,"data":"yes"}}`},
		{[]string{"q", "--decline", "busy", "--answer-id", "p2"}, `{"name":"q","answer":{"id":"p2","reason":"busy"}}`},
		{[]string{"q", "--args", ` {"a":1e400} `}, `{"name":"q","argumentsJson":"{\"a\":1e400}"}`},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			c := &cli{stdout: &strings.Builder{}, stderr: &strings.Builder{}, cmd: cmdExec}
			c.g.init()
			fs := c.flags("")
			var ef execFlags
			ef.register(fs)
			pos, err := fs.parse(tc.args, 1, 2)
			if err != nil {
				t.Fatal(err)
			}
			req, err := ef.request(fs, pos, strings.NewReader(""))
			if err != nil {
				t.Fatal(err)
			}
			got, _ := protojson.Marshal(req)
			var a, b any
			json.Unmarshal(got, &a)
			json.Unmarshal([]byte(tc.want), &b)
			if fmt.Sprint(a) != fmt.Sprint(b) {
				t.Fatalf("request %s, want %s", got, tc.want)
			}
		})
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"debug_echo":       "debug_echo",
		"127.0.0.1:50051":  "127.0.0.1:50051",
		`{"a":1}`:          `'{"a":1}'`,
		"it's":             `'it'\''s'`,
		"":                 "''",
		"two words":        "'two words'",
		"dns:///host:5005": "dns:///host:5005",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

// shellSplit undoes shellQuote for the test: words split on spaces,
// single-quoted parts, and a backslash-escaped quote between them.
func shellSplit(s string) []string {
	var words []string
	var cur strings.Builder
	inWord, quoted := false, false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case quoted && ch == '\'':
			quoted = false
		case quoted:
			cur.WriteByte(ch)
		case ch == '\'':
			quoted, inWord = true, true
		case ch == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case ch == ' ':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(ch)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

func TestQuestionRoundTripWithTheHint(t *testing.T) {
	// The builtin question tool: the hint printed is a command that works.
	srv := startServer(t, `{"debug": true, "builtins": true, "skills": []}`)
	args := `{"questions":[{"question":"Pick a color?","options":["red","green"]},{"question":"Ship it?","options":["yes","no"]}]}`
	out := against(t, srv, "exec", "question", "--args", args).want(t, 1).stdout
	if !strings.Contains(out, "  Pick a color? (options: red, green)\n  Ship it? (options: yes, no)\n") {
		t.Fatalf("prompt not shown:\n%s", out)
	}
	_, hint, ok := strings.Cut(out, "To answer, run:\n  ")
	if !ok {
		t.Fatalf("no hint:\n%s", out)
	}
	words := shellSplit(strings.TrimSpace(hint))
	if len(words) < 2 || words[0] != "toolnexus" {
		t.Fatalf("hint %q", hint)
	}
	r := runCLI(t, "", words[1:]...).want(t, 0)
	if r.stdout != `{"answers":["red","yes"]}`+"\n" {
		t.Fatalf("answering with the hint: %q", r.stdout)
	}
}
