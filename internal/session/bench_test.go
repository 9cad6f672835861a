package session

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/config"
)

// reportP50 adds the median of the measured durations as "p50-ns/op".
func reportP50(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Nanoseconds()), "p50-ns/op")
}

// BenchmarkSessionCall is what a session adds to one call, on a local root
// and on a shared one on the same disk: the lease (Acquire and Release)
// for a call that does not touch the workspace ("call"), and for one that
// writes 100 bytes through the quota into a workspace of 20 files
// ("write": Grow, then the measurement at release).
func BenchmarkSessionCall(b *testing.B) {
	for _, shared := range []bool{false, true} {
		name := "local"
		if shared {
			name = "shared"
		}
		for _, write := range []bool{false, true} {
			op := "call"
			if write {
				op = "write"
			}
			b.Run(name+"/"+op, func(b *testing.B) {
				m, err := New(Options{Root: b.TempDir(), Limits: config.Sessions{IdleTimeout: time.Hour, MaxBytes: 1 << 30, Shared: shared}})
				if err != nil {
					b.Fatal(err)
				}
				defer m.Close()
				l, err := m.Acquire("agent", "bench")
				if err != nil {
					b.Fatal(err)
				}
				for i := range 20 {
					if err := os.WriteFile(filepath.Join(l.Dir(), fmt.Sprintf("f%d", i)), make([]byte, 1000), 0o644); err != nil {
						b.Fatal(err)
					}
				}
				l.Release()
				times := make([]time.Duration, 0, 1<<16)
				for b.Loop() {
					start := time.Now()
					l, err := m.Acquire("agent", "bench")
					if err != nil {
						b.Fatal(err)
					}
					if write {
						_ = l.Dir()
						if err := l.Grow(100); err != nil {
							b.Fatal(err)
						}
					}
					l.Release()
					if len(times) < cap(times) {
						times = append(times, time.Since(start))
					}
				}
				reportP50(b, times)
			})
		}
	}
}

// BenchmarkListSessions lists every session of 10,000 (100 principals of
// 100), on a local root (from memory) and on a shared one (read off the
// volume, as every replica must).
func BenchmarkListSessions(b *testing.B) {
	for _, shared := range []bool{false, true} {
		name := "local-10000"
		if shared {
			name = "shared-10000"
		}
		b.Run(name, func(b *testing.B) {
			root := b.TempDir()
			created := strconv.FormatInt(time.Now().UnixNano(), 10)
			for p := range 100 {
				pdir := principalDir(fmt.Sprintf("agent-%d", p))
				for s := range 100 {
					id := fmt.Sprintf("s%d", s)
					if err := os.MkdirAll(filepath.Join(root, pdir, id), 0o755); err != nil {
						b.Fatal(err)
					}
					meta := filepath.Join(root, metaDir, pdir, id)
					if err := os.MkdirAll(filepath.Dir(meta), 0o755); err != nil {
						b.Fatal(err)
					}
					if err := os.WriteFile(meta, []byte(created+"\n0\n0\n"), 0o644); err != nil {
						b.Fatal(err)
					}
				}
			}
			m, err := New(Options{Root: root, Limits: config.Sessions{IdleTimeout: time.Hour, Shared: shared}})
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close()
			var times []time.Duration
			for b.Loop() {
				start := time.Now()
				if n := len(m.List("", true)); n != 10000 {
					b.Fatalf("listed %d sessions", n)
				}
				times = append(times, time.Since(start))
			}
			reportP50(b, times)
		})
	}
}
