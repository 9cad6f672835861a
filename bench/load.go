package main

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/toolnexus/toolnexus/bench/serverproc"
)

// result is one load run: throughput and latency percentiles.
type result struct {
	calls    int
	elapsed  time.Duration
	p50, p99 time.Duration
	errors   int
	// cpu is the CPU time the server process used during the measured
	// run (zero when no process was watched).
	cpu time.Duration
	// otherCPU is the same for a second process (loadProcs).
	otherCPU time.Duration
}

// cpuPerCall is the server's CPU time per call in the run.
func (r result) cpuPerCall() time.Duration {
	if r.calls == 0 {
		return 0
	}
	return r.cpu / time.Duration(r.calls)
}

func (r result) perSecond() float64 { return float64(r.calls) / r.elapsed.Seconds() }

// load runs call from conc goroutines for d (after a short warm-up) and
// records every call's latency. Bounded in time: it always stops by itself.
func load(conc int, d time.Duration, call func(ctx context.Context) error) result {
	return loadProc(conc, d, call, 0)
}

// loadProc is load that also reads the CPU time server process pid spends
// in the measured run, from /proc/<pid>/stat (pid 0: none).
func loadProc(conc int, d time.Duration, call func(ctx context.Context) error, pid int) result {
	return loadProcs(conc, d, call, pid, 0)
}

// loadProcs is loadProc that also reads the CPU time a second process
// (other, 0: none) spends in the measured run, into result.otherCPU.
func loadProcs(conc int, d time.Duration, call func(ctx context.Context) error, pid, other int) result {
	warm, cancelWarm := context.WithTimeout(context.Background(), d/5)
	runFor(warm, conc, call, nil)
	cancelWarm()

	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	lat := make([][]time.Duration, conc)
	errs := make([]int, conc)
	cpu0, other0 := procCPU(pid), procCPU(other)
	start := time.Now()
	runFor(ctx, conc, call, func(g int, took time.Duration, err error) {
		lat[g] = append(lat[g], took)
		if err != nil {
			errs[g]++
		}
	})
	elapsed := time.Since(start)
	var all []time.Duration
	r := result{elapsed: elapsed, cpu: procCPU(pid) - cpu0, otherCPU: procCPU(other) - other0}
	for g := range lat {
		all = append(all, lat[g]...)
		r.errors += errs[g]
	}
	slices.Sort(all)
	r.calls = len(all)
	if len(all) > 0 {
		r.p50 = all[len(all)/2]
		r.p99 = all[len(all)*99/100]
	}
	return r
}

func runFor(ctx context.Context, conc int, call func(ctx context.Context) error, record func(g int, took time.Duration, err error)) {
	var wg sync.WaitGroup
	for g := 0; g < conc; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				t0 := time.Now()
				err := call(context.Background())
				if record != nil {
					record(g, time.Since(t0), err)
				}
			}
		}()
	}
	wg.Wait()
}

// pair measures a and b alternately reps times and keeps each side's best
// run by throughput, so drift on a shared 2-core machine hits both alike.
func pair(reps, conc int, d time.Duration, a, b func(ctx context.Context) error) (ra, rb result) {
	for i := 0; i < reps; i++ {
		x := load(conc, d, a)
		y := load(conc, d, b)
		if i == 0 || x.perSecond() > ra.perSecond() {
			ra = x
		}
		if i == 0 || y.perSecond() > rb.perSecond() {
			rb = y
		}
	}
	return ra, rb
}

// pairProc is pair for two server processes, with each side's server CPU
// time read from /proc.
func pairProc(reps, conc int, d time.Duration, a func(ctx context.Context) error, pidA int, b func(ctx context.Context) error, pidB int) (ra, rb result) {
	for i := 0; i < reps; i++ {
		x := loadProc(conc, d, a, pidA)
		y := loadProc(conc, d, b, pidB)
		if i == 0 || x.perSecond() > ra.perSecond() {
			ra = x
		}
		if i == 0 || y.perSecond() > rb.perSecond() {
			rb = y
		}
	}
	return ra, rb
}

func procCPU(pid int) time.Duration {
	if pid == 0 {
		return 0
	}
	t, err := serverproc.CPUTime(pid)
	if err != nil {
		return 0
	}
	return t
}

// timeIt returns the median duration of n runs of fn.
func timeIt(n int, fn func()) time.Duration {
	ds := make([]time.Duration, n)
	for i := range ds {
		t0 := time.Now()
		fn()
		ds[i] = time.Since(t0)
	}
	slices.Sort(ds)
	return ds[n/2]
}
