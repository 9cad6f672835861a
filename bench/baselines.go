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
	if wantRow("8") || wantRow("8p") {
		mcpCfg := fmt.Sprintf(`{"builtins": false, "mcpServers": {"echo": {"command": [%q]}}}`, mcpecho)
		tn, err := serverproc.Start(serverBin, tmp, mcpCfg)
		if err != nil {
			return err
		}
		defer tn.Stop()
		if wantRow("8") {
			err := floorRows(rep, floorPair{
				row: "8", what: "MCP stdio tool, toolnexus vs minimal proxy (bench/minproxy), separate processes",
				tool: "echo_echo", config: mcpCfg, tn: tn, tmp: tmp, concs: []int{1, 16, 64}, target: "≥ 1.00×",
				targetAt: map[int]bool{1: true, 16: true}, cpuNote: "MCP child not included",
				baseline: bins["minproxy"], baseTool: "echo", baseArgs: []string{"echo", mcpecho},
			}, d, reps)
			if err != nil {
				return err
			}
		}
		// The same pair with minproxy collecting as seldom as toolnexus does
		// (floorGOGC; minproxy applies it to itself, not to the MCP child it
		// starts), so what is left is the work each does per call, not how
		// often each collects.
		if wantRow("8p") {
			mpf, a, c, stopMPF, err := startBeside(tn.Addr, "echo_echo", bins["minproxy"], []string{floorGOGC}, "echo", "echo", mcpecho)
			if err != nil {
				return err
			}
			defer stopMPF()
			for _, conc := range []int{1, 16} {
				ra, rc := pairProc(reps, conc, d, a, tn.Cmd.Process.Pid, c, mpf.Cmd.Process.Pid)
				checkErrors(rep, "MCP via minproxy ("+floorGOGC+")", rc)
				rep.row("| 8 | … the same, minproxy at toolnexus's GC pacing ("+floorGOGC+"): calls/s | %d | %.0f | %.0f | %.2f× | — |", conc, ra.perSecond(), rc.perSecond(), ra.perSecond()/rc.perSecond())
				rep.row("| 8 | … … p50 latency; server CPU per call | %d | %s; %s | %s; %s | %.2f×; %.2f× | — |", conc, us(ra.p50), us(ra.cpuPerCall()), us(rc.p50), us(rc.cpuPerCall()),
					float64(ra.p50)/float64(rc.p50), float64(ra.cpuPerCall())/float64(rc.cpuPerCall()))
			}
		}
	}

	// 9. debug_echo vs the minimal echo server.
	if wantRow("9") || wantRow("9p") {
		echoCfg := `{"debug": true, "builtins": false}`
		tn, err := serverproc.Start(serverBin, tmp, echoCfg)
		if err != nil {
			return err
		}
		defer tn.Stop()
		if wantRow("9") {
			err := floorRows(rep, floorPair{
				row: "9", what: "debug_echo vs minimal echo server (bench/minecho), separate processes",
				tool: "debug_echo", config: echoCfg, tn: tn, tmp: tmp, concs: []int{1, 16, 64}, target: "≥ 0.97×",
				targetAt: map[int]bool{1: true, 16: true, 64: true},
				baseline: bins["minecho"], baseTool: "debug_echo",
			}, d, reps)
			if err != nil {
				return err
			}
		}
		if wantRow("9p") {
			mef, a, c, stopMEF, err := startBeside(tn.Addr, "debug_echo", bins["minecho"], []string{floorGOGC}, "debug_echo")
			if err != nil {
				return err
			}
			defer stopMEF()
			for _, conc := range []int{1, 64} {
				ra, rc := pairProc(reps, conc, d, a, tn.Cmd.Process.Pid, c, mef.Cmd.Process.Pid)
				checkErrors(rep, "debug_echo via minecho ("+floorGOGC+")", rc)
				rep.row("| 9 | … the same, minecho at toolnexus's GC pacing ("+floorGOGC+"): calls/s | %d | %.0f | %.0f | %.2f× | — |", conc, ra.perSecond(), rc.perSecond(), ra.perSecond()/rc.perSecond())
				rep.row("| 9 | … … server CPU per call | %d | %s | %s | %.2f× | — |", conc, us(ra.cpuPerCall()), us(rc.cpuPerCall()), float64(ra.cpuPerCall())/float64(rc.cpuPerCall()))
			}
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

// baselineSet is the -rows flag: which baseline rows to run. 8p and 9p
// are rows 8 and 9 again with the baseline at toolnexus's GC pacing.
var baselineSet = "8,8p,9,9p,10"

// beforeBin is the -before flag: a previous build of the server that rows
// 8 and 9 measure in the same run, alternating with the current one.
var beforeBin string

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

// startBeside starts a baseline process (bin with env and args) and opens
// the two sides of a comparison with it: a calls nameA at addrA, b calls
// nameB on the baseline. stop closes both connections and the baseline.
func startBeside(addrA, nameA, bin string, env []string, nameB string, args ...string) (base *serverproc.Baseline, a, b func(context.Context) error, stop func(), err error) {
	base, err = serverproc.StartBaselineEnv(bin, env, args...)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	a, b, closeAB, err := executeCalls(addrA, nameA, base.Addr, nameB)
	if err != nil {
		base.Stop()
		return nil, nil, nil, nil, err
	}
	return base, a, b, func() { closeAB(); base.Stop() }, nil
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
