package main

import (
	"context"
	"slices"
	"sync"
	"time"
)

// result is one load run: throughput and latency percentiles.
type result struct {
	calls    int
	elapsed  time.Duration
	p50, p99 time.Duration
	errors   int
}

func (r result) perSecond() float64 { return float64(r.calls) / r.elapsed.Seconds() }

// load runs call from conc goroutines for d (after a short warm-up) and
// records every call's latency. Bounded in time: it always stops by itself.
func load(conc int, d time.Duration, call func(ctx context.Context) error) result {
	warm, cancelWarm := context.WithTimeout(context.Background(), d/5)
	runFor(warm, conc, call, nil)
	cancelWarm()

	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	lat := make([][]time.Duration, conc)
	errs := make([]int, conc)
	start := time.Now()
	runFor(ctx, conc, call, func(g int, took time.Duration, err error) {
		lat[g] = append(lat[g], took)
		if err != nil {
			errs[g]++
		}
	})
	elapsed := time.Since(start)
	var all []time.Duration
	r := result{elapsed: elapsed}
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
