// Package gcfloor keeps the garbage collector's heap goal at or above a
// floor, so a server with a small live heap does not collect many times a
// second.
//
// Go's pacer sets the next collection at twice the live heap (GOGC=100),
// with a 4 MiB minimum meant for small programs. A toolnexus server holds
// about 2 MiB of live heap (compiled schemas, metric series, protobuf and
// seccomp tables), while an MCP call allocates ~80 KiB, most of it decoder
// buffers inside the MCP SDK: under load it collected every ~25 calls, and
// each cycle marked the whole live heap, shrank every idle goroutine's stack
// (which the next call then grew again) and woke the idle processor. That
// was a quarter of the server's CPU per call at one caller and two fifths at
// 16. A floor of a few tens of MiB makes cycles rare, for that much memory.
//
// Go has no setting for a minimum heap goal, so Floor adjusts GOGC after
// every collection: just high enough that the next goal reaches the floor,
// never below the percent the process started with. A memory limit
// (GOMEMLIMIT) still caps the heap: the runtime takes the lower goal.
package gcfloor

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// The runtime's own measures of what the next goal is computed from: the
// goal is live + scan × GOGC/100, scan being live + stacks + globals.
var measures = []string{"/gc/heap/live:bytes", "/gc/scan/stack:bytes", "/gc/scan/globals:bytes"}

// Floor is a running heap floor; Stop removes it.
type Floor struct {
	floor   atomic.Int64
	stopped atomic.Bool

	mu      sync.Mutex // serialises tune: the cleanup goroutine and Set
	samples []metrics.Sample
	base    int // GOGC when the floor started
	percent int // GOGC as last set
}

// Start keeps the heap goal at or above bytes from the next collection on.
// It returns nil, and changes nothing, when the collector is off
// (GOGC=off): there is no goal to raise.
func Start(bytes int64) *Floor {
	base := debug.SetGCPercent(100)
	debug.SetGCPercent(base)
	if base < 0 {
		return nil
	}
	f := &Floor{base: base, percent: base, samples: make([]metrics.Sample, len(measures))}
	for i, name := range measures {
		f.samples[i].Name = name
	}
	f.floor.Store(bytes)
	f.tune()
	f.arm()
	return f
}

// Set changes the floor (on reload); it applies at once.
func (f *Floor) Set(bytes int64) {
	if f == nil {
		return
	}
	f.floor.Store(bytes)
	f.tune()
}

// Stop removes the floor and restores the starting GOGC.
func (f *Floor) Stop() {
	if f == nil || f.stopped.Swap(true) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	debug.SetGCPercent(f.base)
	f.percent = f.base
}

// arm attaches the next retune to the end of the next collection: the
// sentinel is garbage at once, so the collector that frees it runs the
// cleanup, which arms the one after.
func (f *Floor) arm() {
	sentinel := new([32]byte) // not a tiny allocation: those are freed in batches
	runtime.AddCleanup(sentinel, func(f *Floor) {
		if f.stopped.Load() {
			return
		}
		f.tune()
		f.arm()
	}, f)
}

// tune sets GOGC so that the next goal is at least the floor.
func (f *Floor) tune() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped.Load() {
		return
	}
	metrics.Read(f.samples)
	live := f.samples[0].Value.Uint64()
	scan := live + f.samples[1].Value.Uint64() + f.samples[2].Value.Uint64()
	want := Percent(f.floor.Load(), live, scan, f.base)
	if want != f.percent {
		debug.SetGCPercent(want)
		f.percent = want
	}
}

// minimumGoal is the runtime's smallest goal at GOGC=100. The runtime
// scales it with GOGC, so for a small heap a raised GOGC lifts the goal
// through this minimum before live + scan × GOGC/100 gets there.
const minimumGoal = 4 << 20

// Percent is the smallest GOGC whose goal reaches the floor, or base when
// base already does. The runtime's goal is the larger of
// live + scan × GOGC/100 and minimumGoal × GOGC/100, so either term may
// reach the floor first.
func Percent(floor int64, live, scan uint64, base int) int {
	if floor <= 0 || uint64(floor) <= live {
		return base
	}
	f := uint64(floor)
	p := f * 100 / minimumGoal
	if scan > 0 {
		p = min(p, (f-live)*100/scan)
	}
	if p <= uint64(base) {
		return base
	}
	return int(p)
}
