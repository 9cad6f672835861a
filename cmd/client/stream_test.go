package main

import (
	"context"
	"strings"
	"testing"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

var streamer = tool.Must(tool.New("streamer", func(ctx context.Context, _ tool.Call) tool.Result {
	for i := 1; i <= 2; i++ {
		tool.Progress(ctx, float64(i), 2, "step")
	}
	tool.Log(ctx, tool.LevelWarning, "db", map[string]any{"slow": true})
	tool.Log(ctx, tool.LevelInfo, "", "plain text")
	tool.Output(ctx, tool.Stdout, []byte("out\n"))
	tool.Output(ctx, tool.Stderr, []byte("err\n"))
	return tool.Rich(tool.Text("done"), tool.Image("image/png", []byte{1, 2, 3}))
}))

func TestExecStream(t *testing.T) {
	srv := startServer(t, `{"debug": false, "builtins": true, "skills": []}`, streamer)
	r := against(t, srv, "exec", "--stream", "streamer").want(t, 0)
	if r.stdout != "out\ndone\n" {
		t.Fatalf("stdout %q", r.stdout)
	}
	// stderr is a buffer, not a terminal: plain progress lines.
	want := "progress 1/2 step\nprogress 2/2 step\n[warning db] {\"slow\":true}\n[info] plain text\nerr\n[image image/png, 3 bytes]\n"
	if r.stderr != want {
		t.Fatalf("stderr:\n%s\nwant:\n%s", r.stderr, want)
	}
	// bash: the output once, as it came, then the exit note; exit 1.
	r = against(t, srv, "exec", "--stream", "bash", "--args", `{"command": "echo hi; exit 3"}`).want(t, 1)
	if r.stdout != "hi\n" || r.stderr != "bash: command exited with code 3\n" {
		t.Fatalf("bash: stdout %q stderr %q", r.stdout, r.stderr)
	}
	r = against(t, srv, "exec", "--stream", "bash", "--args", `{"command": "echo hi"}`).want(t, 0)
	if r.stdout != "hi\n" || r.stderr != "" {
		t.Fatalf("bash ok: stdout %q stderr %q", r.stdout, r.stderr)
	}
	// --json: one JSON line per event, the result last.
	r = against(t, srv, "--json", "exec", "--stream", "bash", "--args", `{"command": "echo hi"}`).want(t, 0)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"output"`) || !strings.Contains(lines[1], `"result"`) {
		t.Fatalf("json: %q", r.stdout)
	}
}

func TestProgressBar(t *testing.T) {
	if got := progressBar(&pb.ProgressEvent{Progress: 3, Total: 4, Message: "x"}); got != "[###############     ] 3/4 x" {
		t.Fatalf("bar %q", got)
	}
}
