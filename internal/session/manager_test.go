package session

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/goleak"

	"github.com/toolnexus/toolnexus/internal/config"
)

// The janitor is a goroutine; none may outlive its manager.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type clock struct{ ns atomic.Int64 }

func (c *clock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *clock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// newManager runs a manager whose janitor never fires on its own (an idle
// timeout of a day): the tests sweep by hand on a clock they move.
func newManager(t *testing.T, root string, lim config.Sessions) (*Manager, *clock) {
	t.Helper()
	c := &clock{}
	c.ns.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	if lim.IdleTimeout == 0 {
		lim.IdleTimeout = 24 * time.Hour
	}
	m, err := New(Options{Root: root, Limits: lim, Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m, c
}

// forEachMode runs a test against a local root and against a shared one
// (t.Run "local", "shared"): both backends keep the Manager's promises.
func forEachMode(t *testing.T, test func(t *testing.T, shared bool)) {
	for _, shared := range []bool{false, true} {
		name := "local"
		if shared {
			name = "shared"
		}
		t.Run(name, func(t *testing.T) { test(t, shared) })
	}
}

func acquire(t *testing.T, m *Manager, principal, id string) *Lease {
	t.Helper()
	l, err := m.Acquire(principal, id)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestValidate(t *testing.T) {
	for _, id := range []string{"a", "A-b_c.d", strings.Repeat("x", 64), "...", ".hidden", "0"} {
		if err := Validate(id); err != nil {
			t.Errorf("Validate(%q) = %v", id, err)
		}
	}
	for _, id := range []string{"", ".", "..", strings.Repeat("x", 65), "a/b", "a b", "é", "a\x00", "../x", `a\b`} {
		err := Validate(id)
		if !errors.Is(err, ErrInvalidID) || !strings.Contains(err.Error(), IDRule) {
			t.Errorf("Validate(%q) = %v, want the rule", id, err)
		}
	}
}

func TestPrincipalDirRoundTrips(t *testing.T) {
	seen := map[string]string{}
	for _, name := range []string{"", "agent-a", "agent_a", "anonymous", "a/b", "..", "u-x", "é", "_41"} {
		d := principalDir(name)
		if strings.ContainsAny(d, "/\x00") || d == "." || d == ".." || strings.HasPrefix(d, ".") {
			t.Errorf("principalDir(%q) = %q is not one plain path component", name, d)
		}
		if other, dup := seen[d]; dup {
			t.Errorf("%q and %q share the directory %q", name, other, d)
		}
		seen[d] = name
		back, ok := principalFromDir(d)
		if !ok || back != name {
			t.Errorf("principalFromDir(%q) = %q, %v; want %q", d, back, ok, name)
		}
	}
}

func TestSameIDTwoPrincipalsTwoWorkspaces(t *testing.T) {
	forEachMode(t, func(t *testing.T, shared bool) {
		m, _ := newManager(t, t.TempDir(), config.Sessions{Shared: shared})
		a := acquire(t, m, "agent-a", "s1")
		b := acquire(t, m, "agent-b", "s1")
		defer a.Release()
		defer b.Release()
		if a.Dir() == b.Dir() {
			t.Fatalf("both principals got %s", a.Dir())
		}
		for _, d := range []string{a.Dir(), b.Dir()} {
			if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
				t.Fatalf("workspace %s: %v", d, err)
			}
		}
		again := acquire(t, m, "agent-a", "s1")
		defer again.Release()
		if again.Session() != a.Session() {
			t.Fatal("the same principal and id gave a second session")
		}
	})
}

func TestIdleSessionsExpireButNeverDuringACall(t *testing.T) {
	forEachMode(t, func(t *testing.T, shared bool) {
		var deleted []string
		var mu sync.Mutex
		c := &clock{}
		m, err := New(Options{Root: t.TempDir(), Limits: config.Sessions{Shared: shared, IdleTimeout: time.Hour}, Now: c.now,
			OnDelete: func(i Info, reason string) { mu.Lock(); deleted = append(deleted, i.ID+":"+reason); mu.Unlock() }})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		busy := acquire(t, m, "p", "busy")
		idle := acquire(t, m, "p", "idle")
		if err := os.WriteFile(filepath.Join(idle.Dir(), "f"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		idleDir := idle.Dir()
		idle.Release()

		c.advance(59 * time.Minute)
		m.Sweep()
		if len(m.List("", true)) != 2 {
			t.Fatal("a session expired before its idle timeout")
		}
		c.advance(2 * time.Hour)
		m.Sweep()
		got := m.List("p", false)
		if len(got) != 1 || got[0].ID != "busy" {
			t.Fatalf("after the timeout: %+v, want only the session with a running call", got)
		}
		if _, err := os.Stat(idleDir); !os.IsNotExist(err) {
			t.Fatalf("the expired workspace is still there: %v", err)
		}
		busy.Release() // the idle clock starts now
		m.Sweep()
		if len(m.List("p", false)) != 1 {
			t.Fatal("a session expired right after its call ended")
		}
		c.advance(time.Hour)
		m.Sweep()
		if n := len(m.List("", true)); n != 0 {
			t.Fatalf("%d sessions left", n)
		}
		mu.Lock()
		defer mu.Unlock()
		if strings.Join(deleted, ",") != "idle:expired,busy:expired" {
			t.Fatalf("OnDelete heard %v", deleted)
		}
	})
}

func TestDeleteRefusesABusySession(t *testing.T) {
	forEachMode(t, func(t *testing.T, shared bool) {
		m, _ := newManager(t, t.TempDir(), config.Sessions{Shared: shared})
		l := acquire(t, m, "p", "s")
		if err := m.Delete("p", "s"); !errors.Is(err, ErrBusy) {
			t.Fatalf("Delete during a call = %v", err)
		}
		if err := m.Delete("q", "s"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Delete of another principal's session = %v", err)
		}
		dir := l.Dir()
		l.Release()
		if err := m.Delete("p", "s"); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Fatalf("workspace left: %v", err)
		}
		// The id starts afresh.
		l = acquire(t, m, "p", "s")
		defer l.Release()
		if entries, _ := os.ReadDir(l.Dir()); len(entries) != 0 {
			t.Fatalf("a new session with a deleted id sees %v", entries)
		}
	})
}

func TestMaxSessionsPerPrincipal(t *testing.T) {
	forEachMode(t, func(t *testing.T, shared bool) {
		m, _ := newManager(t, t.TempDir(), config.Sessions{Shared: shared, Max: 2})
		acquire(t, m, "p", "a").Release()
		acquire(t, m, "p", "b").Release()
		if _, err := m.Acquire("p", "c"); !errors.Is(err, ErrTooMany) || !strings.Contains(err.Error(), "sessions.max") {
			t.Fatalf("third session = %v", err)
		}
		acquire(t, m, "p", "a").Release() // an existing one still works
		acquire(t, m, "q", "c").Release() // another principal has its own cap
		if err := m.Delete("p", "b"); err != nil {
			t.Fatal(err)
		}
		acquire(t, m, "p", "c").Release()
	})
}

func TestQuota(t *testing.T) {
	forEachMode(t, func(t *testing.T, shared bool) {
		m, _ := newManager(t, t.TempDir(), config.Sessions{Shared: shared, MaxBytes: 100})
		l := acquire(t, m, "p", "s")
		if err := os.WriteFile(filepath.Join(l.Dir(), "f"), make([]byte, 150), 0o644); err != nil {
			t.Fatal(err)
		}
		l.Release() // measured: 150 bytes, over the quota
		l = acquire(t, m, "p", "s")
		defer l.Release()
		if err := l.Grow(1); err == nil || !strings.Contains(err.Error(), "over its quota: 150 of 100 bytes") {
			t.Fatalf("Grow over quota = %v", err)
		}
		if err := l.Grow(-100); err != nil {
			t.Fatalf("shrinking = %v", err)
		}
		if got := l.FileSizeLimit(); got != 50 {
			t.Fatalf("FileSizeLimit = %d, want 50", got)
		}
		if err := l.Grow(51); err == nil || !strings.Contains(err.Error(), "would be exceeded") {
			t.Fatalf("Grow(51) = %v", err)
		}
	})
}

func TestRestartResumesSessions(t *testing.T) {
	forEachMode(t, func(t *testing.T, shared bool) {
		root := t.TempDir()
		m, c := newManager(t, root, config.Sessions{Shared: shared, IdleTimeout: time.Hour})
		l := acquire(t, m, "agent/a", "s1")
		if err := os.WriteFile(filepath.Join(l.Dir(), "keep.txt"), []byte("12345"), 0o644); err != nil {
			t.Fatal(err)
		}
		l.Release()
		created := m.List("", true)[0].CreatedAt
		c.advance(40 * time.Minute)
		acquire(t, m, "agent/a", "s1").Release() // last used 40 minutes in
		m.Close()

		m2, err := New(Options{Root: root, Limits: config.Sessions{Shared: shared, IdleTimeout: time.Hour}, Now: c.now})
		if err != nil {
			t.Fatal(err)
		}
		defer m2.Close()
		got := m2.List("", true)
		if len(got) != 1 || got[0].Principal != "agent/a" || got[0].ID != "s1" || got[0].Bytes != 5 ||
			!got[0].CreatedAt.Equal(created) || !got[0].LastUsedAt.Equal(c.now()) {
			t.Fatalf("after a restart: %+v", got)
		}
		c.advance(59 * time.Minute)
		m2.Sweep()
		if len(m2.List("", true)) != 1 {
			t.Fatal("the idle clock restarted from an earlier time")
		}
		c.advance(time.Minute)
		m2.Sweep()
		if len(m2.List("", true)) != 0 {
			t.Fatal("the idle clock did not resume")
		}
	})
}

func TestMetrics(t *testing.T) {
	forEachMode(t, func(t *testing.T, shared bool) {
		reg := prometheus.NewRegistry()
		m, err := New(Options{Root: t.TempDir(), Limits: config.Sessions{Shared: shared, IdleTimeout: time.Hour}, Metrics: reg})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		for _, id := range []string{"a", "b"} {
			l := acquire(t, m, "p", id)
			if err := os.WriteFile(filepath.Join(l.Dir(), "f"), make([]byte, 10), 0o644); err != nil {
				t.Fatal(err)
			}
			l.Release()
		}
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, mf := range mfs {
			for _, mm := range mf.GetMetric() {
				if mf.GetName() == "toolnexus_session_errors_total" {
					if l := mm.GetLabel(); len(l) != 1 || l[0].GetName() != "op" || mm.GetCounter().GetValue() != 0 {
						t.Errorf("%s %v = %v, want op-labelled and 0", mf.GetName(), l, mm.GetCounter().GetValue())
					}
					continue
				}
				if len(mm.GetLabel()) != 0 {
					t.Errorf("%s has labels %v", mf.GetName(), mm.GetLabel())
				}
				got[mf.GetName()] = mm.GetGauge().GetValue()
			}
		}
		if got["toolnexus_sessions"] != 2 || got["toolnexus_session_bytes"] != 20 {
			t.Fatalf("metrics = %v", got)
		}
	})
}

// An error no caller hears of is logged and counted, not dropped: here
// the janitor cannot record a session's last use (its metadata's
// directory became a file).
func TestDroppedErrorsAreLoggedAndCounted(t *testing.T) {
	reg := prometheus.NewRegistry()
	var logged strings.Builder
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logged.Write(p)
	}), nil))
	root := t.TempDir()
	c := &clock{}
	c.ns.Store(time.Now().UnixNano())
	m, err := New(Options{Root: root, Limits: config.Sessions{IdleTimeout: time.Hour}, Metrics: reg, Logger: log, Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	acquire(t, m, "p", "s").Release()
	metaParent := filepath.Join(m.Root(), metaDir, principalDir("p"))
	if err := os.RemoveAll(metaParent); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(metaParent, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c.advance(time.Minute)
	acquire(t, m, "p", "s").Release() // a new last use to record
	m.Sweep()
	var pm dto.Metric
	if err := m.errors.WithLabelValues(OpPersist).Write(&pm); err != nil || pm.GetCounter().GetValue() != 1 {
		v := pm.GetCounter().GetValue()
		t.Fatalf("toolnexus_session_errors_total{op=persist} = %v, want 1", v)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(logged.String(), "level=WARN") || !strings.Contains(logged.String(), "persist") || !strings.Contains(logged.String(), "not a directory") {
		t.Fatalf("not logged:\n%s", logged.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// The janitor deletes an idle session by itself. The test runs in a
// synctest bubble: its clock is fake, so an hour of idleness passes at
// once and the janitor's own timer decides when it looks.
func TestJanitorRuns(t *testing.T) {
	forEachMode(t, func(t *testing.T, shared bool) {
		synctest.Test(t, func(t *testing.T) {
			m, err := New(Options{Root: t.TempDir(), Limits: config.Sessions{Shared: shared, IdleTimeout: time.Hour}})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			acquire(t, m, "p", "s").Release()
			time.Sleep(30 * time.Minute)
			synctest.Wait()
			if len(m.List("", true)) != 1 {
				t.Fatal("the janitor deleted a session before it was idle for sessions.idleTimeout")
			}
			time.Sleep(2 * time.Hour)
			synctest.Wait()
			if n := len(m.List("", true)); n != 0 {
				t.Fatalf("the janitor left %d idle session(s)", n)
			}
		})
	})
}

// Calls racing the janitor and deletions never lose a lease: a call that
// holds one always finds its workspace.
func TestConcurrentCallsAndExpiry(t *testing.T) {
	forEachMode(t, func(t *testing.T, shared bool) {
		m, err := New(Options{Root: t.TempDir(), Limits: config.Sessions{Shared: shared, IdleTimeout: time.Millisecond}})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 50 {
					l, err := m.Acquire("p", []string{"a", "b"}[(g+i)%2])
					if err != nil {
						t.Error(err)
						return
					}
					if err := os.WriteFile(filepath.Join(l.Dir(), "f"), []byte("x"), 0o644); err != nil {
						t.Errorf("a running call lost its workspace: %v", err)
					}
					_ = m.Delete("p", "a")
					l.Release()
				}
			}()
		}
		wg.Wait()
	})
}

// Two replicas on one shared volume: the one that no longer serves a
// session does not delete it while the other uses it. Replicas sharing a
// root set sessions.shared (a local root is one replica's alone).
func TestSharedVolumeReplicaLeavesAMovedSessionAlone(t *testing.T) {
	root := t.TempDir()
	a, c := newManager(t, root, config.Sessions{IdleTimeout: time.Hour, Shared: true})
	l := acquire(t, a, "p", "moved")
	if err := os.WriteFile(filepath.Join(l.Dir(), "f"), []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	l.Release()
	created := a.List("", true)[0].CreatedAt

	c.advance(50 * time.Minute)
	b, err := New(Options{Root: root, Limits: config.Sessions{IdleTimeout: time.Hour, Shared: true}, Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	lb := acquire(t, b, "p", "moved") // the session's calls now reach b
	lb.Release()
	b.Sweep() // b records the use
	if got := b.List("", true); len(got) != 1 || !got[0].CreatedAt.Equal(created) || got[0].Bytes != 3 {
		t.Fatalf("b adopted %+v", got)
	}

	c.advance(20 * time.Minute) // a's idle timeout passes, b's does not
	a.Sweep()
	if _, err := os.Stat(filepath.Join(lb.Dir(), "f")); err != nil {
		t.Fatalf("a deleted the session b serves: %v", err)
	}
}

// A call in an existing session: a map lookup and two atomics, no lock.
// The lease itself is the one allocation (it is the call's workspace).
func BenchmarkAcquireExisting(b *testing.B) {
	m, err := New(Options{Root: b.TempDir(), Limits: config.Sessions{IdleTimeout: time.Hour}})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	l, err := m.Acquire("agent", "s")
	if err != nil {
		b.Fatal(err)
	}
	l.Release()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l, _ := m.Acquire("agent", "s")
			l.Release()
		}
	})
}
