package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolnexus/toolnexus/bench/serverproc"
)

// runTracing prints rows 17–18 alone (go -C bench run . -tracing).
func runTracing(serverBin string, d time.Duration, reps int) error {
	return printRowsAlone(func(rep *report, tmp string) error { return tracingRows(rep, serverBin, tmp, d, reps) })
}

// receiver is bench/otlprecv running as its own process, as a collector is.
type receiver struct {
	cmd      *exec.Cmd
	endpoint string
	stop     func() string // closes its stdin; returns the spans it counted
}

func startReceiver(tmp string) (*receiver, error) {
	bin := filepath.Join(tmp, "otlprecv")
	if err := serverproc.Build(bin, "otlprecv"); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	out := bufio.NewScanner(stdout)
	if !out.Scan() {
		_ = stdin.Close()
		_ = cmd.Wait()
		return nil, fmt.Errorf("otlprecv printed no endpoint")
	}
	r := &receiver{cmd: cmd, endpoint: out.Text()}
	var once sync.Once
	var count string
	r.stop = func() string {
		once.Do(func() {
			_ = stdin.Close()
			if out.Scan() {
				count = out.Text()
			}
			_ = cmd.Wait()
		})
		return count
	}
	return r, nil
}

// tracingRows are rows 17 and 18: what observing a call costs, every side
// a real server process on loopback. 17 is Execute with tracing on — every
// call sampled, two spans per call (the otelgrpc server span and
// execute_tool) batched and exported over OTLP/gRPC to bench/otlprecv, a
// receiver process that decodes every request and drops it, as a
// collector's receive path does — against the same server with tracing
// off, for debug_echo and for an MCP stdio tool (echo_echo). Each pair
// also reports CPU per call: the server's, and the receiver's, which on
// this machine runs on the same cores. 18 is the audit log on (one JSON
// line per call to a file) against off.
func tracingRows(rep *report, serverBin, tmp string, d time.Duration, reps int) error {
	if _, err := os.Stat(serverBin); err != nil {
		return fmt.Errorf("rows 17–18 run the server binary %s (make build): %w", serverBin, err)
	}
	recv, err := startReceiver(tmp)
	if err != nil {
		return err
	}
	defer recv.stop()
	mcpecho := filepath.Join(tmp, "mcpecho")
	if err := serverproc.Build(mcpecho, "mcpecho"); err != nil {
		return err
	}
	cfg := func(extra string) string {
		return fmt.Sprintf(`{"debug": true, "builtins": false, "mcpServers": {"echo": {"command": [%q]}}%s}`, mcpecho, extra)
	}
	start := func(name, extra string) (*serverproc.Proc, error) {
		dir := filepath.Join(tmp, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		return serverproc.Start(serverBin, dir, cfg(extra))
	}
	off, err := start("off", "")
	if err != nil {
		return err
	}
	defer off.Stop()
	traced, err := start("traced", fmt.Sprintf(`, "telemetry": {"endpoint": %q, "protocol": "grpc", "sampleRatio": 1}`, recv.endpoint))
	if err != nil {
		return err
	}
	defer traced.Stop()

	for _, tool := range []string{"debug_echo", "echo_echo"} {
		a, b, closeAB, err := executeCalls(traced.Addr, tool, off.Addr, tool)
		if err != nil {
			return err
		}
		defer closeAB()
		for _, conc := range []int{1, 64} {
			ra, rb, recvCPU := pairTraced(reps, conc, d, a, traced.Cmd.Process.Pid, b, off.Cmd.Process.Pid, recv.cmd.Process.Pid)
			checkErrors(rep, "Execute traced "+tool, ra)
			checkErrors(rep, "Execute "+tool, rb)
			rep.row("| 17 | tracing on (100%% sampled, OTLP/gRPC to a receiver process) vs off, %s: calls/s | %d | %.0f | %.0f | %+.1f%% time/call | ≤ 15%% |",
				tool, conc, ra.perSecond(), rb.perSecond(), (rb.perSecond()/ra.perSecond()-1)*100)
			rep.row("| 17 | … CPU per call: server (+ receiver) | %d | %s (+ %s) | %s | %+.1f%% server, %+.1f%% with the receiver | — |",
				conc, us(ra.cpuPerCall()), us(recvCPU), us(rb.cpuPerCall()),
				(float64(ra.cpuPerCall())/float64(rb.cpuPerCall())-1)*100, (float64(ra.cpuPerCall()+recvCPU)/float64(rb.cpuPerCall())-1)*100)
		}
	}
	if err := tracingFloorRows(rep, tmp, recv.endpoint, traced, d, reps); err != nil {
		return err
	}

	// Every call made two spans; the batch processor drops spans when its
	// queue is full, which would make tracing look cheaper than it is.
	made := 0.0
	for _, m := range []string{`toolnexus_tool_calls_total{outcome="ok",protocol="grpc",source="debug",tool="debug_echo"}`,
		`toolnexus_tool_calls_total{outcome="ok",protocol="grpc",source="mcp",tool="echo_echo"}`} {
		v, _ := traced.Metric(m)
		made += 2 * v
	}
	made += floorSpans
	_ = traced.Stop() // flushes the last spans
	got, _ := strconv.ParseFloat(recv.stop(), 64)
	switch {
	case got == 0:
		rep.notes = append(rep.notes, "row 17: the receiver got no span; tracing was not on")
	case got < made:
		rep.notes = append(rep.notes, fmt.Sprintf("row 17: the receiver got %.0f of the %.0f spans made (%.1f%% dropped by a full export queue)", got, made, (1-got/made)*100))
	}

	audited, err := start("audited", fmt.Sprintf(`, "audit": {"path": %q}`, filepath.Join(tmp, "audit.log")))
	if err != nil {
		return err
	}
	defer audited.Stop()
	a, b, closeAB, err := executeCalls(audited.Addr, "debug_echo", off.Addr, "debug_echo")
	if err != nil {
		return err
	}
	defer closeAB()
	for _, conc := range []int{1, 64} {
		ra, rb := pairProc(reps, conc, d, a, audited.Cmd.Process.Pid, b, off.Cmd.Process.Pid)
		checkErrors(rep, "Execute audited", ra)
		rep.row("| 18 | audit log on (a file) vs off: calls/s | %d | %.0f | %.0f | %+.1f%% time/call | — |", conc, ra.perSecond(), rb.perSecond(), (rb.perSecond()/ra.perSecond()-1)*100)
	}
	return nil
}

// pairTraced is pairProc that also reads the receiver's CPU time over each
// traced run; it returns the receiver's CPU per call of the best traced run.
func pairTraced(reps, conc int, d time.Duration, a func(context.Context) error, pidA int, b func(context.Context) error, pidB, pidRecv int) (ra, rb result, recvPerCall time.Duration) {
	for i := 0; i < reps; i++ {
		x := loadProcs(conc, d, a, pidA, pidRecv)
		y := loadProc(conc, d, b, pidB)
		if i == 0 || x.perSecond() > ra.perSecond() {
			ra = x
			if x.calls > 0 {
				recvPerCall = x.otherCPU / time.Duration(x.calls)
			}
		}
		if i == 0 || y.perSecond() > rb.perSecond() {
			rb = y
		}
	}
	return ra, rb, recvPerCall
}

// floorSpans counts the spans the traced bench/minecho made (two per
// successful call), so that the drop check covers them too.
var floorSpans float64

// countOK counts call's successful calls into n.
func countOK(call func(context.Context) error, n *atomic.Int64) func(context.Context) error {
	return func(ctx context.Context) error {
		err := call(ctx)
		if err == nil {
			n.Add(1)
		}
		return err
	}
}

// tracingFloorRows measure what the same tracing costs the smallest program
// that does debug_echo's job: bench/minecho with the otelgrpc stats handler,
// an execute_tool span under its server span, and the SDK's batch span
// processor exporting over OTLP/gRPC to the same receiver (two spans per
// call, every call sampled), against bench/minecho as it is. That is the
// floor of the libraries the tracing is built on; the second row compares
// toolnexus traced with it. Both minecho processes collect at toolnexus's
// pacing (its 32 MiB heap floor, floorGOGC), so the rows compare tracing,
// not how often each program collects.
func tracingFloorRows(rep *report, tmp, endpoint string, traced *serverproc.Proc, d time.Duration, reps int) error {
	bin := filepath.Join(tmp, "minecho")
	if err := serverproc.Build(bin, "minecho"); err != nil {
		return err
	}
	floor, t, f, stopFloor, err := startBeside(traced.Addr, "debug_echo", bin, []string{floorGOGC, "MINECHO_OTLP_ENDPOINT=" + endpoint}, "debug_echo")
	if err != nil {
		return err
	}
	defer stopFloor()
	plain, a, b, stopPlain, err := startBeside(floor.Addr, "debug_echo", bin, []string{floorGOGC}, "debug_echo")
	if err != nil {
		return err
	}
	defer stopPlain()
	var made atomic.Int64
	a, f = countOK(a, &made), countOK(f, &made)
	defer func() { floorSpans = 2 * float64(made.Load()) }()
	for _, conc := range []int{1, 64} {
		ra, rb := pairProc(reps, conc, d, a, floor.Cmd.Process.Pid, b, plain.Cmd.Process.Pid)
		checkErrors(rep, "Execute minecho traced", ra)
		rep.row("| 17 | floor: bench/minecho traced (otelgrpc + the SDK's OTLP/gRPC batch exporter, 2 spans per call) vs bench/minecho: calls/s | %d | %.0f | %.0f | %+.1f%% time/call | — |",
			conc, ra.perSecond(), rb.perSecond(), (rb.perSecond()/ra.perSecond()-1)*100)
		rep.row("| 17 | … CPU per call | %d | %s | %s | %+.1f%% | — |", conc, us(ra.cpuPerCall()), us(rb.cpuPerCall()), (float64(ra.cpuPerCall())/float64(rb.cpuPerCall())-1)*100)
		rt, rf := pairProc(reps, conc, d, t, traced.Cmd.Process.Pid, f, floor.Cmd.Process.Pid)
		rep.row("| 17 | debug_echo traced (toolnexus, 2 spans per call) vs bench/minecho traced (the same 2 spans): calls/s | %d | %.0f | %.0f | %.2f× | ≥ 0.92× |",
			conc, rt.perSecond(), rf.perSecond(), rt.perSecond()/rf.perSecond())
		rep.row("| 17 | … CPU per call | %d | %s | %s | %.2f× | — |", conc, us(rt.cpuPerCall()), us(rf.cpuPerCall()), float64(rt.cpuPerCall())/float64(rf.cpuPerCall()))
	}
	return nil
}
