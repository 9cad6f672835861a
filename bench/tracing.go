package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/toolnexus/toolnexus/bench/serverproc"
	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

// runTracing prints rows 17–18 alone (go -C bench run . -tracing).
func runTracing(d time.Duration, reps int) error {
	tmp, err := os.MkdirTemp("", "toolnexus-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	fmt.Println("| # | comparison | concurrency | toolnexus | baseline | ratio | target |\n|---|---|---|---|---|---|---|")
	rep := &report{}
	if err := tracingRows(rep, tmp, d, reps); err != nil {
		return err
	}
	for _, n := range rep.notes {
		fmt.Println("Note:", n)
	}
	return nil
}

// tracingRows are rows 17 and 18: what observing a call costs. 17 is
// Execute with tracing on — every call sampled, two spans (the otelgrpc
// server span and execute_tool) exported over OTLP/gRPC to a real receiver
// in another process — against the same server with tracing off. 18 is the
// audit log on (one JSON line per call to a file) against off.
func tracingRows(rep *report, tmp string, d time.Duration, reps int) error {
	// The receiver is its own process, as a collector is: the row measures
	// what exporting costs the server, not what decoding costs a collector.
	recvBin := filepath.Join(tmp, "otlprecv")
	if err := serverproc.Build(recvBin, "otlprecv"); err != nil {
		return err
	}
	recv := exec.Command(recvBin)
	stdin, err := recv.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := recv.StdoutPipe()
	if err != nil {
		return err
	}
	if err := recv.Start(); err != nil {
		return err
	}
	out := bufio.NewScanner(stdout)
	if !out.Scan() {
		_ = stdin.Close()
		_ = recv.Wait()
		return fmt.Errorf("otlprecv printed no endpoint")
	}
	endpoint := out.Text()
	var received string
	var once sync.Once
	spans := func() string {
		once.Do(func() {
			_ = stdin.Close()
			if out.Scan() {
				received = out.Text()
			}
			_ = recv.Wait()
		})
		return received
	}
	defer spans()
	base := `{"debug": true, "builtins": false%s}`
	off, err := startServer(tmp, fmt.Sprintf(base, ""), false)
	if err != nil {
		return err
	}
	defer off.stop()
	traced, err := startServerIn(tmp, "traced", fmt.Sprintf(base, fmt.Sprintf(`, "telemetry": {"endpoint": %q, "protocol": "grpc", "sampleRatio": 1}`, endpoint)))
	if err != nil {
		return err
	}
	audited, err := startServerIn(tmp, "audited", fmt.Sprintf(base, fmt.Sprintf(`, "audit": {"path": %q}`, filepath.Join(tmp, "audit.log"))))
	if err != nil {
		return err
	}
	defer audited.stop()

	execCall := func(c pb.RegistryServiceClient) func(context.Context) error {
		req := &pb.ExecuteRequest{Name: "debug_echo", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: payload}}
		return func(ctx context.Context) error {
			resp, err := c.Execute(ctx, req)
			if err == nil && resp.GetResult().GetIsError() {
				return fmt.Errorf("tool error: %s", resp.GetResult().GetOutput())
			}
			return err
		}
	}
	for _, conc := range []int{1, 64} {
		a, b := pair(reps, conc, d, execCall(traced.client), execCall(off.client))
		checkErrors(rep, "Execute traced", a)
		cost := (1/a.perSecond() - 1/b.perSecond()) / (1 / b.perSecond()) * 100
		rep.row("| 17 | tracing on (100%% sampled, OTLP/gRPC to a receiver process) vs off: calls/s | %d | %.0f | %.0f | %+.1f%% time/call | ≤ 15%% |", conc, a.perSecond(), b.perSecond(), cost)
	}
	traced.stop() // flushes the last spans
	if n := spans(); n == "" || n == "0" {
		rep.notes = append(rep.notes, "row 17: the receiver got no span; tracing was not on")
	}
	for _, conc := range []int{1, 64} {
		a, b := pair(reps, conc, d, execCall(audited.client), execCall(off.client))
		checkErrors(rep, "Execute audited", a)
		cost := (1/a.perSecond() - 1/b.perSecond()) / (1 / b.perSecond()) * 100
		rep.row("| 18 | audit log on (a file) vs off: calls/s | %d | %.0f | %.0f | %+.1f%% time/call | — |", conc, a.perSecond(), b.perSecond(), cost)
	}
	return nil
}

// startServerIn is startServer with its config and workspace in their own
// directory under tmp, beside the other servers'.
func startServerIn(tmp, name, cfgText string) (*running, error) {
	dir := filepath.Join(tmp, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return startServer(dir, cfgText, false)
}
