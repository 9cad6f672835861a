package server_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// collect reads a stream to its end: the events before the result, the
// result, and the stream's error. It fails the test if anything follows
// the result or the result is missing.
func collect(t *testing.T, stream interface {
	Recv() (*pb.ExecuteEvent, error)
}) ([]*pb.ExecuteEvent, *pb.ToolResult) {
	t.Helper()
	var events []*pb.ExecuteEvent
	var result *pb.ToolResult
	for {
		ev, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("Recv: %v", err)
		}
		if result != nil {
			t.Fatalf("an event after the result: %v", ev)
		}
		if r := ev.GetResult(); r != nil {
			result = r
			continue
		}
		events = append(events, ev)
	}
	if result == nil {
		t.Fatal("the stream ended without a result event")
	}
	return events, result
}

func (f *fixture) stream(t *testing.T, ctx context.Context, name, argsJSON string) ([]*pb.ExecuteEvent, *pb.ToolResult) {
	t.Helper()
	s, err := f.reg.ExecuteStream(ctx, &pb.ExecuteRequest{Name: name, Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: argsJSON}})
	if err != nil {
		t.Fatal(err)
	}
	return collect(t, s)
}

var png = []byte{0x89, 'P', 'N', 'G', 0, 1, 2}

// reporter is a native tool that reports one of each event and returns a
// rich result.
var reporter = tool.Must(tool.New("reporter", func(ctx context.Context, _ tool.Call) tool.Result {
	for i := 1; i <= 3; i++ {
		tool.Progress(ctx, float64(i), 3, "step")
	}
	tool.Log(ctx, tool.LevelWarning, "rep", map[string]any{"n": 1})
	tool.Output(ctx, tool.Stdout, []byte("out\n"))
	tool.Output(ctx, tool.Stderr, []byte("err\n"))
	return tool.Rich(tool.Text("done"), tool.Image("image/png", png), tool.Audio("audio/wav", []byte("RIFF")),
		tool.TextResource("file:///r.md", "text/markdown", "# r"), tool.BlobResource("file:///b", "application/octet-stream", []byte{0, 1}),
		tool.ResourceLink("file:///l", "l", "text/plain"))
}))

func TestExecuteStreamEventsThenOneResultLast(t *testing.T) {
	t.Parallel()
	f := start(t, debugOnly, reporter)
	events, res := f.stream(t, context.Background(), "reporter", `{}`)
	if len(events) != 6 {
		t.Fatalf("events: %v", events)
	}
	for i := range 3 {
		if p := events[i].GetProgress(); p.GetProgress() != float64(i+1) || p.GetTotal() != 3 || p.GetMessage() != "step" {
			t.Fatalf("progress %d: %v", i, events[i])
		}
	}
	if l := events[3].GetLog(); l.GetLevel() != "warning" || l.GetLogger() != "rep" || l.GetData().GetStructValue().GetFields()["n"].GetNumberValue() != 1 {
		t.Fatalf("log: %v", events[3])
	}
	if o := events[4].GetOutput(); o.GetStream() != pb.OutputStream_OUTPUT_STREAM_STDOUT || string(o.GetData()) != "out\n" {
		t.Fatalf("stdout: %v", events[4])
	}
	if o := events[5].GetOutput(); o.GetStream() != pb.OutputStream_OUTPUT_STREAM_STDERR || string(o.GetData()) != "err\n" {
		t.Fatalf("stderr: %v", events[5])
	}
	c := res.GetContent()
	if res.GetOutput() != "done" || res.GetIsError() || len(c) != 6 ||
		c[0].GetText().GetText() != "done" ||
		!bytes.Equal(c[1].GetImage().GetData(), png) || c[1].GetImage().GetMimeType() != "image/png" ||
		string(c[2].GetAudio().GetData()) != "RIFF" ||
		c[3].GetResource().GetText() != "# r" || c[3].GetResource().GetUri() != "file:///r.md" ||
		!bytes.Equal(c[4].GetResource().GetBlob(), []byte{0, 1}) ||
		c[5].GetResource().GetUri() != "file:///l" || c[5].GetResource().GetContents() != nil {
		t.Fatalf("result: %v", res)
	}
	// Unary Execute returns the same result, content included.
	if r := f.exec(t, "reporter", `{}`); len(r.GetContent()) != 6 || r.GetOutput() != "done" {
		t.Fatalf("unary: %v", r)
	}
	// And the call was counted like any other.
	if line := testutil.MetricLine(f.scrape(t), "toolnexus_tool_calls_total", `tool="reporter"`, `outcome="ok"`, `protocol="grpc"`); !strings.HasSuffix(line, " 2") {
		t.Fatalf("calls_total: %q", line)
	}
}

func TestExecuteStreamFailuresAreResultEvents(t *testing.T) {
	t.Parallel()
	f := start(t, debugOnly)
	cases := []struct {
		name, args string
		outcome    pb.Outcome
	}{
		{"nope", `{}`, pb.Outcome_OUTCOME_UNKNOWN_TOOL},
		{"debug_panic", `{}`, pb.Outcome_OUTCOME_PANIC},
		{"debug_fail", `{}`, pb.Outcome_OUTCOME_TOOL_ERROR},
		{"debug_echo", `[1]`, pb.Outcome_OUTCOME_INVALID_ARGUMENTS},
	}
	for _, c := range cases {
		events, res := f.stream(t, context.Background(), c.name, c.args)
		if len(events) != 0 || !res.GetIsError() || res.GetOutcome() != c.outcome {
			t.Errorf("%s: events %v result %v; want %v", c.name, events, res, c.outcome)
		}
	}
	_, err := f.reg.ExecuteStream(context.Background(), &pb.ExecuteRequest{})
	if err == nil {
		var s interface {
			Recv() (*pb.ExecuteEvent, error)
		}
		s, _ = f.reg.ExecuteStream(context.Background(), &pb.ExecuteRequest{})
		_, err = s.Recv()
	}
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("no name: %v, want InvalidArgument", err)
	}
}

func TestExecuteStreamAllowlist(t *testing.T) {
	_, conn := authServer(t)
	reg := pb.NewRegistryServiceClient(conn)
	s, err := reg.ExecuteStream(bearer(agentSecret), &pb.ExecuteRequest{Name: "other"})
	if err != nil {
		t.Fatal(err)
	}
	_, res := collect(t, s)
	if res.GetOutcome() != pb.Outcome_OUTCOME_UNKNOWN_TOOL || res.GetOutput() != "unknown tool: other" {
		t.Fatalf("outside the allowlist: %v", res)
	}
	s, err = reg.ExecuteStream(bearer(agentSecret), &pb.ExecuteRequest{Name: "mine_a"})
	if err != nil {
		t.Fatal(err)
	}
	if _, res := collect(t, s); res.GetIsError() {
		t.Fatalf("inside the allowlist: %v", res)
	}
}

// Cancelling the stream cancels the tool: the tool sees its context end.
func TestExecuteStreamCancelCancelsTheTool(t *testing.T) {
	t.Parallel()
	started, stopped := make(chan struct{}), make(chan error, 1)
	held := tool.Must(tool.New("held", func(ctx context.Context, _ tool.Call) tool.Result {
		tool.Output(ctx, tool.Stdout, []byte("working\n"))
		close(started)
		<-ctx.Done()
		stopped <- ctx.Err()
		return tool.ContextResult(ctx, "held")
	}))
	f := start(t, debugOnly, held)
	ctx, cancel := context.WithCancel(context.Background())
	s, err := f.reg.ExecuteStream(ctx, &pb.ExecuteRequest{Name: "held"})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := s.Recv()
	if err != nil || string(ev.GetOutput().GetData()) != "working\n" {
		t.Fatalf("first event: %v %v", ev, err)
	}
	<-started
	cancel()
	if err := <-stopped; !errors.Is(err, context.Canceled) {
		t.Fatalf("the tool's context ended with %v", err)
	}
	if _, err := s.Recv(); status.Code(err) != codes.Canceled {
		t.Fatalf("after cancel: %v", err)
	}
}

// bash through ExecuteStream: a line reaches the client while the command
// is still running (it then blocks on a FIFO that the test opens only
// after reading the line), and cancelling the stream kills the command.
func TestExecuteStreamBashLiveOutputAndCancel(t *testing.T) {
	t.Parallel()
	f := start(t, `{"debug": false, "builtins": true, "skills": []}`)
	ws := filepath.Join(filepath.Dir(f.cfgPath), "ws")
	gate := filepath.Join(ws, "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	// A root server's commands act as uid 65534: the gate the test (root)
	// made must be theirs to read.
	if uid, gid := sandboxIDs(); uid >= 0 {
		if err := os.Chown(gate, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	s, err := f.reg.ExecuteStream(context.Background(), &pb.ExecuteRequest{Name: "bash",
		Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{"command": "echo first; read x < gate; echo second"}`}})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := s.Recv()
	if err != nil || string(ev.GetOutput().GetData()) != "first\n" || ev.GetOutput().GetStream() != pb.OutputStream_OUTPUT_STREAM_STDOUT {
		t.Fatalf("first event: %v %v", ev, err)
	}
	g, err := os.OpenFile(gate, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = g.WriteString("go\n")
	g.Close()
	events, res := collect(t, s)
	if len(events) != 1 || string(events[0].GetOutput().GetData()) != "second\n" || res.GetOutput() != "first\nsecond\n" {
		t.Fatalf("rest: %v %v", events, res)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The background sleep is found by a marker in its command line: in
	// the sandbox's PID namespace $! is not the host's pid.
	marker := "100." + strconv.Itoa(os.Getpid())
	s, err = f.reg.ExecuteStream(ctx, &pb.ExecuteRequest{Name: "bash",
		Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{"command": "sleep ` + marker + ` & echo started; wait"}`}})
	if err != nil {
		t.Fatal(err)
	}
	ev, err = s.Recv()
	if err != nil || strings.TrimSpace(string(ev.GetOutput().GetData())) != "started" {
		t.Fatal(ev, err)
	}
	var pids []string
	for len(pids) == 0 { // forked before the echo; exec'd as sleep soon after
		pids = processesWith(marker)
	}
	pid, err := strconv.Atoi(pids[0])
	if err != nil {
		t.Fatal(err)
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatalf("pidfd_open(%d): %v", pid, err)
	}
	defer unix.Close(fd)
	cancel()
	if _, err := s.Recv(); status.Code(err) != codes.Canceled {
		t.Fatalf("after cancel: %v", err)
	}
	// The pidfd becomes readable when the process exits.
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, 20_000)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n == 0 {
			t.Fatalf("the command's background process %d outlived the cancelled stream (poll %d, %v)", pid, n, err)
		}
		break
	}
}
