package main

import (
	"context"
	"fmt"
	"time"

	"github.com/toolnexus/toolnexus/bench/serverproc"
)

// floorPair is one of rows 8 and 9: the cheapest call through toolnexus
// against the smallest program doing the same job, each a separate
// process, at several caller counts — the floor the server's plumbing
// (interceptors, metrics, stack growth, workers) is held to.
type floorPair struct {
	row, what string
	tool      string // the tool toolnexus serves
	config    string // the server's config, for a -before build too
	tn        *serverproc.Proc
	tmp       string
	concs     []int
	target    string
	targetAt  map[int]bool // caller counts the target applies to
	cpuNote   string       // what the CPU row leaves out, if anything

	baseline, baseTool string   // the minimal program and its tool name
	baseArgs           []string // the minimal program's arguments
}

// side is one process of a comparison: how to call it and its pid (for
// the CPU time it spends).
type side struct {
	call func(context.Context) error
	pid  int
}

// bestOf measures every side reps times, one after another, rotating the
// order each round so that no side always runs right after another, and
// keeps each side's best run by calls/s: drift on a shared machine hits
// every side alike, and the best of several runs is the least disturbed.
func bestOf(reps, conc int, d time.Duration, sides ...side) []result {
	best := make([]result, len(sides))
	for i := 0; i < reps; i++ {
		for k := range sides {
			j := (k + i) % len(sides)
			r := loadProc(conc, d, sides[j].call, sides[j].pid)
			if best[j].calls == 0 || r.perSecond() > best[j].perSecond() {
				best[j] = r
			}
		}
	}
	return best
}

// floorRows measures p: toolnexus, the minimal program and, with -before,
// a previous build of the server, alternating in one run; it writes the
// calls/s, p50 and server-CPU rows for each caller count.
func floorRows(rep *report, p floorPair, d time.Duration, reps int) error {
	base, tnCall, baseCall, stop, err := startBeside(p.tn.Addr, p.tool, p.baseline, nil, p.baseTool, p.baseArgs...)
	if err != nil {
		return err
	}
	defer stop()
	sides := []side{{tnCall, p.tn.Cmd.Process.Pid}, {baseCall, base.Cmd.Process.Pid}}
	if beforeBin != "" {
		old, err := serverproc.Start(beforeBin, p.tmp, p.config)
		if err != nil {
			return fmt.Errorf("-before %s: %w", beforeBin, err)
		}
		defer old.Stop()
		oldCall, closeOld, err := executeCall(old.Addr, p.tool)
		if err != nil {
			return err
		}
		defer closeOld()
		sides = append(sides, side{oldCall, old.Cmd.Process.Pid})
	}
	cpu := "server CPU per call (/proc)"
	if p.cpuNote != "" {
		cpu = "server CPU per call (/proc, " + p.cpuNote + ")"
	}
	for _, conc := range p.concs {
		r := bestOf(reps, conc, d, sides...)
		checkErrors(rep, p.tool+" via toolnexus (process)", r[0])
		checkErrors(rep, p.tool+" via "+p.baseline, r[1])
		target := "—"
		if p.targetAt[conc] {
			target = p.target
		}
		rep.row("| %s | %s: calls/s | %d | %.0f | %.0f | %.2f× | %s |", p.row, p.what, conc, r[0].perSecond(), r[1].perSecond(), r[0].perSecond()/r[1].perSecond(), target)
		rep.row("| %s | … p50 latency | %d | %s | %s | %.2f× | — |", p.row, conc, us(r[0].p50), us(r[1].p50), float64(r[0].p50)/float64(r[1].p50))
		rep.row("| %s | … %s | %d | %s | %s | %.2f× | — |", p.row, cpu, conc, us(r[0].cpuPerCall()), us(r[1].cpuPerCall()), float64(r[0].cpuPerCall())/float64(r[1].cpuPerCall()))
		if len(r) > 2 {
			checkErrors(rep, p.tool+" via the -before build", r[2])
			rep.row("| %s | … the -before build, same run: calls/s; p50 | %d | %.0f; %s | %.0f; %s | %.2f×; %.2f× | — |", p.row, conc,
				r[2].perSecond(), us(r[2].p50), r[1].perSecond(), us(r[1].p50), r[2].perSecond()/r[1].perSecond(), float64(r[2].p50)/float64(r[1].p50))
		}
	}
	return nil
}
