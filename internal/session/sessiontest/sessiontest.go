// Package sessiontest is the contract every session.Backend passes: run
// it from the implementation's own tests with a constructor. Each check
// gets a fresh root, a clock it moves (kept near the real one, so file
// modification times take it as set) and an Env that fails the test on
// any dropped error: in normal operation a backend drops none.
package sessiontest

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/session"
)

// NewBackend makes the backend under test over env.
type NewBackend func(t *testing.T, env session.Env) session.Backend

// Env is one check's environment: the session.Env a backend is made
// with, its clock, and what OnDelete heard.
type Env struct {
	session.Env
	ns      atomic.Int64
	mu      sync.Mutex
	deleted []string
	limits  atomic.Pointer[config.Sessions]
}

// Advance moves the clock.
func (e *Env) Advance(d time.Duration) { e.ns.Add(int64(d)) }

// Now is the clock.
func (e *Env) Now() time.Time { return time.Unix(0, e.ns.Load()) }

// Heard is what OnDelete heard, "id:reason" joined by commas.
func (e *Env) Heard() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return strings.Join(e.deleted, ",")
}

// NewEnv is a fresh root with the limits lim.
func NewEnv(t *testing.T, lim config.Sessions) *Env {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return envAt(t, root, lim)
}

func envAt(t *testing.T, root string, lim config.Sessions) *Env {
	e := &Env{}
	e.ns.Store(time.Now().Truncate(time.Second).UnixNano())
	if lim.IdleTimeout == 0 {
		lim.IdleTimeout = time.Hour
	}
	e.limits.Store(&lim)
	e.Env = session.Env{Root: root, Limits: func() config.Sessions { return *e.limits.Load() }, Now: e.Now,
		OnDelete: func(i session.Info, reason string) {
			e.mu.Lock()
			e.deleted = append(e.deleted, i.ID+":"+reason)
			e.mu.Unlock()
		},
		Dropped: func(op string, err error) { t.Errorf("dropped error (%s): %v", op, err) }}
	return e
}

// Run runs the contract against backends made by newBackend.
func Run(t *testing.T, newBackend NewBackend) {
	t.Helper()
	for _, c := range []struct {
		name string
		run  func(*testing.T, NewBackend)
	}{
		{"AcquireMakesAnEmptyWorkspaceInTheRoot", acquireMakes},
		{"CallsShareTheSessionAndReleaseRecordsTheLastUse", callsShare},
		{"GrowAndUsedKeepTheQuota", quota},
		{"AcquireRefusesPastSessionsMax", cap},
		{"DeleteRefusesARunningCallAndRemovesAnIdleSession", deleteSession},
		{"SweepRemovesIdleSessionsAndSparesRunningCalls", sweep},
		{"ListFiltersByPrincipal", list},
		{"ARestartFindsTheSessions", restart},
		{"StatsCountWithoutAWalk", stats},
		{"ConcurrentFirstCallsMakeOneSession", concurrentFirst},
		{"ConcurrentCallsAndRemovalsNeverLoseARunningCall", racesWithRemoval},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, newBackend) })
	}
}

func open(t *testing.T, newBackend NewBackend, lim config.Sessions) (*Env, session.Backend) {
	t.Helper()
	e := NewEnv(t, lim)
	b := newBackend(t, e.Env)
	t.Cleanup(b.Close)
	return e, b
}

func acquire(t *testing.T, b session.Backend, principal, id string) *session.Session {
	t.Helper()
	s, err := b.Acquire(principal, id)
	if err != nil {
		t.Fatalf("Acquire(%q, %q): %v", principal, id, err)
	}
	return s
}

func sorted(infos []session.Info) []session.Info {
	slices.SortFunc(infos, func(a, b session.Info) int { return strings.Compare(a.Principal+"/"+a.ID, b.Principal+"/"+b.ID) })
	return infos
}

func acquireMakes(t *testing.T, newBackend NewBackend) {
	e, b := open(t, newBackend, config.Sessions{})
	s := acquire(t, b, "p", "s")
	defer b.Release(s, false)
	if es, err := os.ReadDir(s.Dir()); err != nil || len(es) != 0 {
		t.Fatalf("workspace %s: %v %v", s.Dir(), es, err)
	}
	if !strings.HasPrefix(s.Dir(), e.Root+string(filepath.Separator)) {
		t.Fatalf("workspace %s outside the root %s", s.Dir(), e.Root)
	}
	got := b.List("p", false)
	if len(got) != 1 || got[0].ID != "s" || !got[0].CreatedAt.Equal(e.Now()) {
		t.Fatalf("List = %+v, want s created at %v", got, e.Now())
	}
}

func callsShare(t *testing.T, newBackend NewBackend) {
	e, b := open(t, newBackend, config.Sessions{})
	x, y := acquire(t, b, "p", "s"), acquire(t, b, "p", "s")
	if x != y {
		t.Fatal("two calls in one session got two sessions")
	}
	e.Advance(time.Minute)
	b.Release(x, false)
	if err := b.Delete("p", "s"); !errors.Is(err, session.ErrBusy) {
		t.Fatalf("Delete with one call still running = %v, want ErrBusy", err)
	}
	b.Release(y, false)
	if got := b.List("p", false); len(got) != 1 || !got[0].LastUsedAt.Equal(e.Now()) {
		t.Fatalf("the last use is not the release: %+v, now %v", got, e.Now())
	}
	b.Release(acquire(t, b, "p", "s"), false) // entered again once released
}

func quota(t *testing.T, newBackend NewBackend) {
	_, b := open(t, newBackend, config.Sessions{MaxBytes: 100})
	s := acquire(t, b, "p", "s")
	if err := b.Grow(s, 60, 100); err != nil {
		t.Fatal(err)
	}
	if err := b.Grow(s, 50, 100); err == nil || !strings.Contains(err.Error(), "would be exceeded") {
		t.Fatalf("Grow past the quota = %v", err)
	}
	if err := b.Grow(s, -10, 100); err != nil {
		t.Fatalf("shrinking = %v", err)
	}
	if got := b.Used(s); got != 50 {
		t.Fatalf("Used = %d, want 50", got)
	}
	if err := os.WriteFile(filepath.Join(s.Dir(), "f"), make([]byte, 150), 0o644); err != nil {
		t.Fatal(err)
	}
	b.Release(s, true) // measured: 150 bytes, over the quota
	s = acquire(t, b, "p", "s")
	defer b.Release(s, false)
	if got := b.Used(s); got != 150 {
		t.Fatalf("Used after the measurement = %d, want 150", got)
	}
	if err := b.Grow(s, 1, 100); err == nil || !strings.Contains(err.Error(), "over its quota: 150 of 100 bytes") {
		t.Fatalf("Grow over the quota = %v", err)
	}
}

func cap(t *testing.T, newBackend NewBackend) {
	_, b := open(t, newBackend, config.Sessions{Max: 1})
	b.Release(acquire(t, b, "p", "a"), false)
	if _, err := b.Acquire("p", "b"); !errors.Is(err, session.ErrTooMany) || !strings.Contains(err.Error(), "sessions.max") {
		t.Fatalf("second session = %v, want ErrTooMany naming sessions.max", err)
	}
	b.Release(acquire(t, b, "q", "b"), false) // another principal's
	if err := b.Delete("p", "a"); err != nil {
		t.Fatal(err)
	}
	b.Release(acquire(t, b, "p", "b"), false)
}

func deleteSession(t *testing.T, newBackend NewBackend) {
	e, b := open(t, newBackend, config.Sessions{})
	s := acquire(t, b, "p", "s")
	if err := os.WriteFile(filepath.Join(s.Dir(), "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := b.Delete("p", "s"); !errors.Is(err, session.ErrBusy) {
		t.Fatalf("Delete during a call = %v", err)
	}
	if err := b.Delete("p", "nope"); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("Delete of no session = %v", err)
	}
	dir := s.Dir()
	b.Release(s, true)
	if err := b.Delete("p", "s"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("workspace left: %v", err)
	}
	if err := b.Delete("p", "s"); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("second Delete = %v", err)
	}
	if got := b.List("", true); len(got) != 0 {
		t.Fatalf("listed after Delete: %+v", got)
	}
	if got := e.Heard(); got != "s:deleted" {
		t.Fatalf("OnDelete heard %q", got)
	}
	s = acquire(t, b, "p", "s")
	defer b.Release(s, false)
	if es, _ := os.ReadDir(s.Dir()); len(es) != 0 {
		t.Fatalf("a new session with a deleted id sees %v", es)
	}
}

func sweep(t *testing.T, newBackend NewBackend) {
	e, b := open(t, newBackend, config.Sessions{})
	busy := acquire(t, b, "p", "busy")
	b.Release(acquire(t, b, "p", "idle"), false)
	t0 := e.Now()
	b.Sweep(t0.Add(time.Hour-time.Second), time.Hour)
	if n := len(b.List("p", false)); n != 2 {
		t.Fatalf("%d sessions before the idle timeout", n)
	}
	b.Sweep(t0.Add(2*time.Hour), time.Hour)
	if got := b.List("p", false); len(got) != 1 || got[0].ID != "busy" {
		t.Fatalf("after the timeout: %+v", got)
	}
	if got := e.Heard(); got != "idle:expired" {
		t.Fatalf("OnDelete heard %q", got)
	}
	b.Release(busy, false)
}

func list(t *testing.T, newBackend NewBackend) {
	_, b := open(t, newBackend, config.Sessions{})
	b.Release(acquire(t, b, "", "a"), false)
	b.Release(acquire(t, b, "p", "b"), false)
	b.Release(acquire(t, b, "p", "c"), false)
	if got := sorted(b.List("p", false)); len(got) != 2 || got[0].ID != "b" || got[1].ID != "c" {
		t.Fatalf("List(p) = %+v", got)
	}
	all := sorted(b.List("", true))
	if len(all) != 3 || all[0].Principal != session.Anonymous || all[0].ID != "a" {
		t.Fatalf("List(all) = %+v", all)
	}
}

func restart(t *testing.T, newBackend NewBackend) {
	e := NewEnv(t, config.Sessions{})
	b := newBackend(t, e.Env)
	s := acquire(t, b, "p", "s")
	if err := os.WriteFile(filepath.Join(s.Dir(), "keep"), []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	b.Release(s, true)
	created := b.List("", true)[0].CreatedAt
	b.Close()
	b2 := newBackend(t, e.Env)
	defer b2.Close()
	got := b2.List("", true)
	if len(got) != 1 || got[0].ID != "s" || got[0].Bytes != 5 || !got[0].CreatedAt.Equal(created) {
		t.Fatalf("after a restart: %+v", got)
	}
	s = acquire(t, b2, "p", "s")
	defer b2.Release(s, false)
	if b, err := os.ReadFile(filepath.Join(s.Dir(), "keep")); err != nil || string(b) != "12345" {
		t.Fatalf("the workspace after a restart: %q %v", b, err)
	}
}

func stats(t *testing.T, newBackend NewBackend) {
	_, b := open(t, newBackend, config.Sessions{MaxBytes: 1000})
	s := acquire(t, b, "p", "a")
	if err := os.WriteFile(filepath.Join(s.Dir(), "f"), make([]byte, 40), 0o644); err != nil {
		t.Fatal(err)
	}
	b.Release(s, true)
	s = acquire(t, b, "q", "b")
	if err := b.Grow(s, 7, 1000); err != nil {
		t.Fatal(err)
	}
	if n, bytes := b.Stats(); n != 2 || bytes != 47 {
		t.Fatalf("Stats = %d sessions, %d bytes; want 2, 47", n, bytes)
	}
	b.Release(s, false)
	if err := b.Delete("p", "a"); err != nil {
		t.Fatal(err)
	}
	if n, bytes := b.Stats(); n != 1 || bytes != 7 {
		t.Fatalf("Stats after a Delete = %d sessions, %d bytes; want 1, 7", n, bytes)
	}
}

func concurrentFirst(t *testing.T, newBackend NewBackend) {
	_, b := open(t, newBackend, config.Sessions{Max: 1})
	got := make(chan *session.Session, 16)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			s, err := b.Acquire("p", "s")
			if err != nil {
				t.Error(err)
				return
			}
			got <- s
		})
	}
	wg.Wait()
	close(got)
	var first *session.Session
	var all []*session.Session
	for s := range got {
		if first == nil {
			first = s
		} else if s != first {
			t.Fatal("sixteen first calls made two sessions")
		}
		all = append(all, s)
	}
	defer func() {
		for _, s := range all {
			b.Release(s, false)
		}
	}()
	if n, _ := b.Stats(); n != 1 || len(b.List("p", false)) != 1 {
		t.Fatalf("%d sessions open, %d listed; want 1", n, len(b.List("p", false)))
	}
}

// racesWithRemoval runs calls in a session while Delete and Sweep try to
// remove it: no call ever finds its workspace gone under it, and the
// session is removed only between calls.
func racesWithRemoval(t *testing.T, newBackend NewBackend) {
	e, b := open(t, newBackend, config.Sessions{})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				s, err := b.Acquire("p", "s")
				if err != nil {
					t.Error(err)
					return
				}
				if err := os.WriteFile(filepath.Join(s.Dir(), "f"), []byte("x"), 0o644); err != nil {
					t.Errorf("a running call lost its workspace: %v", err)
				}
				b.Release(s, true)
			}
		})
	}
	deadline := time.Now().Add(500 * time.Millisecond)
	for time.Now().Before(deadline) {
		if err := b.Delete("p", "s"); err != nil && !errors.Is(err, session.ErrBusy) && !errors.Is(err, session.ErrNotFound) {
			t.Errorf("Delete: %v", err)
		}
		b.Sweep(e.Now().Add(2*time.Hour), time.Hour)
	}
	close(stop)
	wg.Wait()
}
