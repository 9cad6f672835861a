package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/toolnexus/toolnexus/bench/serverproc"
	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

// baselineRows measures toolnexus against the smallest programs that do the
// same job, every side a separate process on loopback, as in production:
//
//	8  an MCP stdio tool through bin/toolnexus-server vs bench/minproxy
//	   (gRPC Execute → go-sdk CallTool on one stdio session → text);
//	9  debug_echo through bin/toolnexus-server vs bench/minecho (Execute
//	   returns arguments_json);
//	10 the interceptor chain on vs off (bench/tnserver, both sides).
//
// Each pair also reports the server process's CPU time per call, read from
// /proc/<pid>/stat over the measured run.
func baselineRows(rep *report, serverBin, tmp, mcpecho string, d time.Duration, reps int) error {
	bins := map[string]string{}
	for _, name := range []string{"minproxy", "minecho", "tnserver"} {
		bins[name] = filepath.Join(tmp, name)
		if err := serverproc.Build(bins[name], name); err != nil {
			return err
		}
	}

	// 8. The MCP proxy pair: both spawn the same mcpecho as their child.
	if wantRow("8") {
		tn, err := serverproc.Start(serverBin, tmp, fmt.Sprintf(`{"builtins": false, "mcpServers": {"echo": {"command": [%q]}}}`, mcpecho))
		if err != nil {
			return err
		}
		defer tn.Stop()
		mp, err := serverproc.StartBaseline(bins["minproxy"], "echo", mcpecho)
		if err != nil {
			return err
		}
		defer mp.Stop()
		a, b, closeAB, err := executeCalls(tn.Addr, "echo_echo", mp.Addr, "echo")
		if err != nil {
			return err
		}
		defer closeAB()
		for _, conc := range []int{1, 16} {
			ra, rb := pairProc(reps, conc, d, a, tn.Cmd.Process.Pid, b, mp.Cmd.Process.Pid)
			checkErrors(rep, "MCP via toolnexus (process)", ra)
			checkErrors(rep, "MCP via minproxy", rb)
			rep.row("| 8 | MCP stdio tool, toolnexus vs minimal proxy (bench/minproxy), separate processes: calls/s | %d | %.0f | %.0f | %.2f× | ≥ 0.95× |", conc, ra.perSecond(), rb.perSecond(), ra.perSecond()/rb.perSecond())
			rep.row("| 8 | … p50 latency | %d | %s | %s | %.2f× | ≤ 1.05× |", conc, us(ra.p50), us(rb.p50), float64(ra.p50)/float64(rb.p50))
			rep.row("| 8 | … server CPU per call (/proc, MCP child not included) | %d | %s | %s | %.2f× | — |", conc, us(ra.cpuPerCall()), us(rb.cpuPerCall()), float64(ra.cpuPerCall())/float64(rb.cpuPerCall()))
		}
		// The same pair with minproxy collecting as seldom as toolnexus does
		// (its 32 MiB heap floor is GOGC=800 on a heap this small; minproxy applies BENCH_GOGC to itself, not to the MCP child it starts), so what
		// is left is the work each does per call, not how often each collects.
		mpf, err := serverproc.StartBaselineEnv(bins["minproxy"], []string{floorGOGC}, "echo", mcpecho)
		if err != nil {
			return err
		}
		defer mpf.Stop()
		a, c, closeAC, err := executeCalls(tn.Addr, "echo_echo", mpf.Addr, "echo")
		if err != nil {
			return err
		}
		defer closeAC()
		for _, conc := range []int{1, 16} {
			ra, rc := pairProc(reps, conc, d, a, tn.Cmd.Process.Pid, c, mpf.Cmd.Process.Pid)
			checkErrors(rep, "MCP via minproxy ("+floorGOGC+")", rc)
			rep.row("| 8 | … the same, minproxy at toolnexus's GC pacing ("+floorGOGC+"): calls/s | %d | %.0f | %.0f | %.2f× | — |", conc, ra.perSecond(), rc.perSecond(), ra.perSecond()/rc.perSecond())
			rep.row("| 8 | … … p50 latency; server CPU per call | %d | %s; %s | %s; %s | %.2f×; %.2f× | — |", conc, us(ra.p50), us(ra.cpuPerCall()), us(rc.p50), us(rc.cpuPerCall()),
				float64(ra.p50)/float64(rc.p50), float64(ra.cpuPerCall())/float64(rc.cpuPerCall()))
		}
	}

	// 9. debug_echo vs the minimal echo server.
	if wantRow("9") {
		tn, err := serverproc.Start(serverBin, tmp, `{"debug": true, "builtins": false}`)
		if err != nil {
			return err
		}
		defer tn.Stop()
		me, err := serverproc.StartBaseline(bins["minecho"])
		if err != nil {
			return err
		}
		defer me.Stop()
		a, b, closeAB, err := executeCalls(tn.Addr, "debug_echo", me.Addr, "debug_echo")
		if err != nil {
			return err
		}
		defer closeAB()
		for _, conc := range []int{1, 16, 64} {
			ra, rb := pairProc(reps, conc, d, a, tn.Cmd.Process.Pid, b, me.Cmd.Process.Pid)
			checkErrors(rep, "debug_echo (process)", ra)
			rep.row("| 9 | debug_echo vs minimal echo server (bench/minecho), separate processes: calls/s | %d | %.0f | %.0f | %.2f× | ≥ 0.92× |", conc, ra.perSecond(), rb.perSecond(), ra.perSecond()/rb.perSecond())
			rep.row("| 9 | … p50 latency | %d | %s | %s | %.2f× | — |", conc, us(ra.p50), us(rb.p50), float64(ra.p50)/float64(rb.p50))
			rep.row("| 9 | … server CPU per call (/proc) | %d | %s | %s | %.2f× | — |", conc, us(ra.cpuPerCall()), us(rb.cpuPerCall()), float64(ra.cpuPerCall())/float64(rb.cpuPerCall()))
		}
		mef, err := serverproc.StartBaselineEnv(bins["minecho"], []string{floorGOGC})
		if err != nil {
			return err
		}
		defer mef.Stop()
		a, c, closeAC, err := executeCalls(tn.Addr, "debug_echo", mef.Addr, "debug_echo")
		if err != nil {
			return err
		}
		defer closeAC()
		for _, conc := range []int{1, 64} {
			ra, rc := pairProc(reps, conc, d, a, tn.Cmd.Process.Pid, c, mef.Cmd.Process.Pid)
			rep.row("| 9 | … the same, minecho at toolnexus's GC pacing ("+floorGOGC+"): calls/s | %d | %.0f | %.0f | %.2f× | — |", conc, ra.perSecond(), rc.perSecond(), ra.perSecond()/rc.perSecond())
			rep.row("| 9 | … … server CPU per call | %d | %s | %s | %.2f× | — |", conc, us(ra.cpuPerCall()), us(rc.cpuPerCall()), float64(ra.cpuPerCall())/float64(rc.cpuPerCall()))
		}
	}

	// 10. The interceptor chain on vs off, both as processes.
	if wantRow("10") {
		cfg := `{"debug": true, "builtins": false}`
		on, err := serverproc.Start(bins["tnserver"], tmp, cfg)
		if err != nil {
			return err
		}
		defer on.Stop()
		off, err := serverproc.Start(bins["tnserver"], tmp, cfg, "--no-interceptors")
		if err != nil {
			return err
		}
		defer off.Stop()
		a, b, closeAB, err := executeCalls(on.Addr, "debug_echo", off.Addr, "debug_echo")
		if err != nil {
			return err
		}
		defer closeAB()
		const conc = 64
		ra, rb := pairProc(reps, conc, d, a, on.Cmd.Process.Pid, b, off.Cmd.Process.Pid)
		cost := (1/ra.perSecond() - 1/rb.perSecond()) / (1 / rb.perSecond()) * 100
		rep.row("| 10 | interceptor chain on vs off, separate processes: calls/s | %d | %.0f | %.0f | %+.1f%% time/call | ≤ 8%% |", conc, ra.perSecond(), rb.perSecond(), cost)
		rep.row("| 10 | … server CPU per call (/proc) | %d | %s | %s | %+.1f%% | — |", conc, us(ra.cpuPerCall()), us(rb.cpuPerCall()), (float64(ra.cpuPerCall())/float64(rb.cpuPerCall())-1)*100)
	}
	return nil
}

// floorGOGC gives a baseline toolnexus's GC pacing: toolnexus keeps its
// heap goal at server.gcHeapFloorMiB (32 MiB by default), which on a heap
// of a few MiB is the runtime's 4 MiB minimum scaled by GOGC=800.
const floorGOGC = "BENCH_GOGC=800"

// baselineSet is the -rows flag: which baseline rows to run.
var baselineSet = "8,9,10"

func wantRow(n string) bool { return slices.Contains(strings.Split(baselineSet, ","), n) }

// executeCall dials addr and returns a load function calling Execute on
// name with the benchmark payload, failing on an is_error result.
func executeCall(addr, name string) (func(context.Context) error, func(), error) {
	conn, err := dial(addr)
	if err != nil {
		return nil, nil, err
	}
	c := pb.NewRegistryServiceClient(conn)
	req := &pb.ExecuteRequest{Name: name, Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: payload}}
	call := func(ctx context.Context) error {
		resp, err := c.Execute(ctx, req)
		if err == nil && resp.GetResult().GetIsError() {
			return fmt.Errorf("tool error: %s", resp.GetResult().GetOutput())
		}
		return err
	}
	return call, func() { conn.Close() }, nil
}

// executeCalls is executeCall for the two sides of a comparison; the
// returned function closes both connections.
func executeCalls(addrA, nameA, addrB, nameB string) (a, b func(context.Context) error, closeBoth func(), err error) {
	a, closeA, err := executeCall(addrA, nameA)
	if err != nil {
		return nil, nil, nil, err
	}
	b, closeB, err := executeCall(addrB, nameB)
	if err != nil {
		closeA()
		return nil, nil, nil, err
	}
	return a, b, func() { closeA(); closeB() }, nil
}
