package gcfloor_test

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/toolnexus/toolnexus/internal/gcfloor"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const mib = 1 << 20

func TestPercent(t *testing.T) {
	cases := []struct {
		name        string
		floor       int64
		live, scan  uint64
		base, wants int
	}{
		{"no floor", 0, 2 * mib, 3 * mib, 100, 100},
		{"a small heap: the scaled minimum reaches the floor first", 32 * mib, 2 * mib, 3 * mib, 100, 800},
		{"a larger heap: live + scan × GOGC/100 reaches it first", 32 * mib, 10 * mib, 11 * mib, 100, 200},
		{"a heap already above the floor", 32 * mib, 40 * mib, 41 * mib, 100, 100},
		{"base already reaches the floor", 8 * mib, 3 * mib, 4 * mib, 150, 150},
		{"nothing measured yet", 32 * mib, 0, 0, 100, 800},
	}
	for _, c := range cases {
		if got := gcfloor.Percent(c.floor, c.live, c.scan, c.base); got != c.wants {
			t.Errorf("%s: Percent(%d MiB, live %d, scan %d, base %d) = %d, want %d", c.name, c.floor/mib, c.live, c.scan, c.base, got, c.wants)
		}
	}
}

func heapGoal() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// waitGoal collects until the runtime's goal is within [lo, hi]: the floor
// retunes on a cleanup that runs after a collection, not during it.
func waitGoal(t *testing.T, lo, hi uint64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		g := heapGoal()
		if g >= lo && g <= hi {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("heap goal %.1f MiB, want %.1f–%.1f MiB", float64(g)/mib, float64(lo)/mib, float64(hi)/mib)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func gogc() uint64 {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// waitPercent collects until the floor's cleanup has set GOGC to want.
func waitPercent(t *testing.T, want uint64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		if gogc() == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GOGC %d, want %d", gogc(), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestFloorHoldsTheGoalAndStopRestoresIt(t *testing.T) {
	f := gcfloor.Start(64 * mib)
	if f == nil {
		t.Fatal("Start returned nil with the collector on")
	}
	waitGoal(t, 64*mib, 72*mib)

	// The floor follows the live heap from collection to collection
	// without being told: with 48 MiB live, base GOGC already passes 64 MiB,
	// so the percent falls back to 100; with it gone the floor returns.
	// Twenty collections in between show each cycle re-arms the next.
	for range 20 {
		runtime.GC()
	}
	ballast := make([]*[mib]byte, 48)
	for i := range ballast {
		ballast[i] = new([mib]byte)
	}
	waitPercent(t, 100)
	runtime.KeepAlive(ballast)
	ballast = nil
	waitPercent(t, 1600)
	waitGoal(t, 64*mib, 72*mib)

	f.Set(24 * mib) // a reload
	waitGoal(t, 24*mib, 28*mib)

	f.Stop()
	f.Stop() // idempotent
	waitGoal(t, 0, 16*mib)
	if p := debug.SetGCPercent(100); p != 100 {
		t.Errorf("GOGC after Stop = %d, want the starting 100", p)
	}
}

func TestCollectorOffIsLeftAlone(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	if f := gcfloor.Start(64 * mib); f != nil {
		f.Stop()
		t.Fatal("Start with GOGC=off returned a floor; it must change nothing")
	}
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Errorf("GOGC = %d after Start with the collector off, want it still off", p)
	}
	var nilFloor *gcfloor.Floor
	nilFloor.Set(mib) // a nil floor is a no-op, as Start returns for GOGC=off
	nilFloor.Stop()
}
