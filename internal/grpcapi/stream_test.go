package grpcapi_test

import (
	"bytes"
	"context"
	"errors"
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
	"github.com/toolnexus/toolnexus/internal/testutil/inproc"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

func TestExecuteStreamEventsThenOneResultLast(t *testing.T) {
	t.Parallel()
	f := inproc.Serve(t, inproc.DebugOnly, inproc.Reporter)
	events, res := f.Stream(t, context.Background(), "reporter", `{}`)
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
		!bytes.Equal(c[1].GetImage().GetData(), inproc.PNG) || c[1].GetImage().GetMimeType() != "image/png" ||
		string(c[2].GetAudio().GetData()) != "RIFF" ||
		c[3].GetResource().GetText() != "# r" || c[3].GetResource().GetUri() != "file:///r.md" ||
		!bytes.Equal(c[4].GetResource().GetBlob(), []byte{0, 1}) ||
		c[5].GetResource().GetUri() != "file:///l" || c[5].GetResource().GetContents() != nil {
		t.Fatalf("result: %v", res)
	}
	// Unary Execute returns the same result, content included.
	if r := f.Execute(t, context.Background(), "reporter", `{}`); len(r.GetContent()) != 6 || r.GetOutput() != "done" {
		t.Fatalf("unary: %v", r)
	}
	// And the call was counted like any other.
	if line := testutil.MetricLine(f.Scrape(t), "toolnexus_tool_calls_total", `tool="reporter"`, `outcome="ok"`, `protocol="grpc"`); !strings.HasSuffix(line, " 2") {
		t.Fatalf("calls_total: %q", line)
	}
}

func TestExecuteStreamFailuresAreResultEvents(t *testing.T) {
	t.Parallel()
	f := inproc.Serve(t, inproc.DebugOnly)
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
		events, res := f.Stream(t, context.Background(), c.name, c.args)
		if len(events) != 0 || !res.GetIsError() || res.GetOutcome() != c.outcome {
			t.Errorf("%s: events %v result %v; want %v", c.name, events, res, c.outcome)
		}
	}
	_, err := f.Registry.ExecuteStream(context.Background(), &pb.ExecuteRequest{})
	if err == nil {
		var s interface {
			Recv() (*pb.ExecuteEvent, error)
		}
		s, _ = f.Registry.ExecuteStream(context.Background(), &pb.ExecuteRequest{})
		_, err = s.Recv()
	}
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("no name: %v, want InvalidArgument", err)
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
	f := inproc.Serve(t, inproc.DebugOnly, held)
	ctx, cancel := context.WithCancel(context.Background())
	s, err := f.Registry.ExecuteStream(ctx, &pb.ExecuteRequest{Name: "held"})
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
	f := inproc.Serve(t, `{"debug": false, "builtins": true, "skills": []}`)
	ws := filepath.Join(filepath.Dir(f.ConfigPath), "ws")
	gate := filepath.Join(ws, "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	// A root server's commands act as uid 65534: the gate the test (root)
	// made must be theirs to read.
	if uid, gid := testutil.SandboxIDs(); uid >= 0 {
		if err := os.Chown(gate, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	s, err := f.Registry.ExecuteStream(context.Background(), &pb.ExecuteRequest{Name: "bash",
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
	events, res := inproc.Collect(t, s)
	if len(events) != 1 || string(events[0].GetOutput().GetData()) != "second\n" || res.GetOutput() != "first\nsecond\n" {
		t.Fatalf("rest: %v %v", events, res)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The background sleep is found by a marker in its command line: in
	// the sandbox's PID namespace $! is not the host's pid.
	marker := "100." + strconv.Itoa(os.Getpid())
	s, err = f.Registry.ExecuteStream(ctx, &pb.ExecuteRequest{Name: "bash",
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
		pids = testutil.ProcessesWith(marker)
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
