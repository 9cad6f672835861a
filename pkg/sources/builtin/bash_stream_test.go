package builtin_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// liveSink collects output events on a channel, copying the bytes (they are
// only valid during the call).
func liveSink(ctx context.Context) (context.Context, <-chan tool.Event) {
	ch := make(chan tool.Event, 64)
	return tool.WithEvents(ctx, func(e tool.Event) {
		e.Bytes = append([]byte(nil), e.Bytes...)
		ch <- e
	}), ch
}

// A line reaches the caller while the command is still running: the
// command prints, then blocks on a FIFO that the test opens only after it
// has received the line.
func TestBashStreamsOutputBeforeTheCommandEnds(t *testing.T) {
	k := newKit(t)
	gate := filepath.Join(k.dir, "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, events := liveSink(context.Background())
	done := make(chan tool.Result, 1)
	go func() {
		done <- k.runCtx(ctx, "bash", map[string]any{"command": "echo first; echo oops >&2; read x < gate; echo second"})
	}()
	var live strings.Builder
	for !strings.Contains(live.String(), "oops\n") {
		e := <-events
		if e.Kind != tool.EventOutput || e.Stream != tool.Stdout {
			t.Fatalf("event %+v", e)
		}
		live.Write(e.Bytes)
	}
	if live.String() != "first\noops\n" {
		t.Fatalf("live output before the gate: %q", live.String())
	}
	select {
	case res := <-done:
		t.Fatalf("the command ended before the gate opened: %+v", res)
	default:
	}
	f, err := os.OpenFile(gate, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("go\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	res := <-done
	check(t, res, want{output: "first\noops\nsecond\n", meta: map[string]any{"exitCode": 0}})
	for len(events) > 0 {
		live.Write((<-events).Bytes)
	}
	if live.String() != res.Output {
		t.Fatalf("live %q, result %q", live.String(), res.Output)
	}
}

// Cancelling a streaming call kills the command and everything it started.
func TestBashStreamCancelKillsTheProcess(t *testing.T) {
	k := newKit(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ctx, events := liveSink(ctx)
	done := make(chan tool.Result, 1)
	go func() {
		done <- k.runCtx(ctx, "bash", map[string]any{"command": "sleep 100 & echo $!; wait"})
	}()
	var line strings.Builder
	for !strings.HasSuffix(line.String(), "\n") {
		line.Write((<-events).Bytes)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line.String()))
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	res := <-done
	if res.Outcome != tool.OutcomeCanceled {
		t.Fatalf("result %+v", res)
	}
	assertExited(t, pid)
}

// Live output stops at the output cap, saying so; the result is capped as
// always.
func TestBashLiveOutputIsCapped(t *testing.T) {
	k := newKitCap(t, 100)
	ctx, events := liveSink(context.Background())
	res := k.runCtx(ctx, "bash", map[string]any{"command": "head -c 5000 /dev/zero | tr '\\0' a"})
	if res.Metadata["truncated"] != true {
		t.Fatalf("result %+v", res)
	}
	var live strings.Builder
	for len(events) > 0 {
		live.Write((<-events).Bytes)
	}
	if want := strings.Repeat("a", 100) + "\n[live output stopped at 100 bytes; the result says how much was omitted]\n"; live.String() != want {
		t.Fatalf("live output %q", live.String())
	}
}
