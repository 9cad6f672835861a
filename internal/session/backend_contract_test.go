package session

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/config"
)

// contractEnv is one Manager over the backend under test, its clock and
// what OnDelete heard.
type contractEnv struct {
	m       *Manager
	clock   *clock
	root    string
	mu      sync.Mutex
	deleted []string
}

func (e *contractEnv) heard() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return strings.Join(e.deleted, ",")
}

// newContractEnv opens a Manager on root with the backend the shared flag
// picks; the clock stays near the real one so file mtimes take it as set.
func newContractEnv(t *testing.T, root string, lim config.Sessions, c *clock) *contractEnv {
	t.Helper()
	e := &contractEnv{clock: c, root: root}
	if lim.IdleTimeout == 0 {
		lim.IdleTimeout = time.Hour
	}
	m, err := New(Options{Root: root, Limits: lim, Now: c.now, OnDelete: func(i Info, reason string) {
		e.mu.Lock()
		e.deleted = append(e.deleted, i.ID+":"+reason)
		e.mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	e.m = m
	return e
}

// runBackendContract checks the promises of the Backend interface
// (backend.go) on the implementation newEnv's Managers use.
func runBackendContract(t *testing.T, newEnv func(t *testing.T, root string, lim config.Sessions, c *clock) *contractEnv) {
	start := func() *clock {
		c := &clock{}
		c.ns.Store(time.Now().Truncate(time.Second).UnixNano())
		return c
	}
	t.Run("Open creates an empty workspace with the call held", func(t *testing.T) {
		e := newEnv(t, t.TempDir(), config.Sessions{}, start())
		l := acquire(t, e.m, "p", "s")
		defer l.Release()
		s := l.Session()
		if r := s.refs.Load(); r != 1 {
			t.Fatalf("refs after Open = %d, want 1", r)
		}
		if es, err := os.ReadDir(l.Dir()); err != nil || len(es) != 0 {
			t.Fatalf("workspace %s: %v %v", l.Dir(), es, err)
		}
		if !strings.HasPrefix(l.Dir(), e.m.Root()+string(filepath.Separator)) {
			t.Fatalf("workspace %s outside the root %s", l.Dir(), e.m.Root())
		}
		got := e.m.backend.List("p", false)
		if len(got) != 1 || got[0].ID != "s" || !got[0].CreatedAt.Equal(e.clock.now()) {
			t.Fatalf("List = %+v", got)
		}
	})
	t.Run("Hold and Release count the calls", func(t *testing.T) {
		e := newEnv(t, t.TempDir(), config.Sessions{}, start())
		a := acquire(t, e.m, "p", "s")
		b := acquire(t, e.m, "p", "s")
		if a.Session() != b.Session() || a.Session().refs.Load() != 2 {
			t.Fatalf("two calls: same=%v refs=%d", a.Session() == b.Session(), a.Session().refs.Load())
		}
		e.clock.advance(time.Minute)
		a.Release()
		b.Release()
		s := a.Session()
		if r := s.refs.Load(); r != 0 {
			t.Fatalf("refs after both released = %d", r)
		}
		if got := e.m.List("p", false); len(got) != 1 || !got[0].LastUsedAt.Equal(e.clock.now()) {
			t.Fatalf("the last use is not the release: %+v, now %v", got, e.clock.now())
		}
		if !s.enter() {
			t.Fatal("a released session cannot be entered")
		}
		if err := e.m.backend.Hold(s); err != nil {
			t.Fatalf("Hold = %v", err)
		}
		e.m.backend.Release(s, false)
	})
	t.Run("Grow and Used keep the quota", func(t *testing.T) {
		e := newEnv(t, t.TempDir(), config.Sessions{MaxBytes: 100}, start())
		l := acquire(t, e.m, "p", "s")
		s, bk := l.Session(), e.m.backend
		if err := bk.Grow(s, 60, 100); err != nil {
			t.Fatal(err)
		}
		if err := bk.Grow(s, 50, 100); err == nil || !strings.Contains(err.Error(), "would be exceeded") {
			t.Fatalf("Grow past the quota = %v", err)
		}
		if err := bk.Grow(s, -10, 100); err != nil {
			t.Fatalf("shrinking = %v", err)
		}
		if got := bk.Used(s); got != 50 {
			t.Fatalf("Used = %d, want 50", got)
		}
		if err := os.WriteFile(filepath.Join(l.Dir(), "f"), make([]byte, 150), 0o644); err != nil {
			t.Fatal(err)
		}
		l.Release() // measured: 150 bytes, over the quota
		l = acquire(t, e.m, "p", "s")
		defer l.Release()
		if got := bk.Used(l.Session()); got != 150 {
			t.Fatalf("Used after the measurement = %d, want 150", got)
		}
		if err := bk.Grow(l.Session(), 1, 100); err == nil || !strings.Contains(err.Error(), "over its quota: 150 of 100 bytes") {
			t.Fatalf("Grow over the quota = %v", err)
		}
	})
	t.Run("Open refuses past sessions.max", func(t *testing.T) {
		e := newEnv(t, t.TempDir(), config.Sessions{Max: 1}, start())
		acquire(t, e.m, "p", "a").Release()
		if _, err := e.m.Acquire("p", "b"); !errors.Is(err, ErrTooMany) {
			t.Fatalf("second session = %v", err)
		}
		acquire(t, e.m, "q", "b").Release()
		if err := e.m.Delete("p", "a"); err != nil {
			t.Fatal(err)
		}
		acquire(t, e.m, "p", "b").Release()
	})
	t.Run("Delete refuses a running call and removes an idle session", func(t *testing.T) {
		e := newEnv(t, t.TempDir(), config.Sessions{}, start())
		l := acquire(t, e.m, "p", "s")
		if err := os.WriteFile(filepath.Join(l.Dir(), "f"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := e.m.backend.Delete("p", "s"); !errors.Is(err, ErrBusy) {
			t.Fatalf("Delete during a call = %v", err)
		}
		if err := e.m.backend.Delete("p", "nope"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Delete of no session = %v", err)
		}
		dir := l.Dir()
		l.Release()
		if err := e.m.backend.Delete("p", "s"); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Fatalf("workspace left: %v", err)
		}
		if err := e.m.backend.Delete("p", "s"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("second Delete = %v", err)
		}
		if got := e.m.List("", true); len(got) != 0 {
			t.Fatalf("listed after Delete: %+v", got)
		}
		if got := e.heard(); got != "s:deleted" {
			t.Fatalf("OnDelete heard %q", got)
		}
		l = acquire(t, e.m, "p", "s")
		defer l.Release()
		if es, _ := os.ReadDir(l.Dir()); len(es) != 0 {
			t.Fatalf("a new session with a deleted id sees %v", es)
		}
	})
	t.Run("Sweep removes idle sessions and spares running calls", func(t *testing.T) {
		e := newEnv(t, t.TempDir(), config.Sessions{}, start())
		busy := acquire(t, e.m, "p", "busy")
		acquire(t, e.m, "p", "idle").Release()
		t0 := e.clock.now()
		e.m.backend.Sweep(t0.Add(time.Hour-time.Second), time.Hour)
		if n := len(e.m.List("p", false)); n != 2 {
			t.Fatalf("%d sessions before the idle timeout", n)
		}
		e.m.backend.Sweep(t0.Add(2*time.Hour), time.Hour)
		if got := e.m.List("p", false); len(got) != 1 || got[0].ID != "busy" {
			t.Fatalf("after the timeout: %+v", got)
		}
		if got := e.heard(); got != "idle:expired" {
			t.Fatalf("OnDelete heard %q", got)
		}
		busy.Release()
	})
	t.Run("List filters by principal", func(t *testing.T) {
		e := newEnv(t, t.TempDir(), config.Sessions{}, start())
		acquire(t, e.m, "", "a").Release()
		acquire(t, e.m, "p", "b").Release()
		acquire(t, e.m, "p", "c").Release()
		if got := e.m.List("p", false); len(got) != 2 || got[0].ID != "b" || got[1].ID != "c" {
			t.Fatalf("List(p) = %+v", got)
		}
		all := e.m.List("", true)
		if len(all) != 3 || all[0].Principal != Anonymous || all[0].ID != "a" {
			t.Fatalf("List(all) = %+v", all)
		}
	})
	t.Run("a restart finds the sessions", func(t *testing.T) {
		root, c := t.TempDir(), start()
		e := newEnv(t, root, config.Sessions{}, c)
		l := acquire(t, e.m, "p", "s")
		if err := os.WriteFile(filepath.Join(l.Dir(), "keep"), []byte("12345"), 0o644); err != nil {
			t.Fatal(err)
		}
		l.Release()
		created := e.m.List("", true)[0].CreatedAt
		e.m.Close()
		e2 := newEnv(t, root, config.Sessions{}, c)
		got := e2.m.List("", true)
		if len(got) != 1 || got[0].ID != "s" || got[0].Bytes != 5 || !got[0].CreatedAt.Equal(created) {
			t.Fatalf("after a restart: %+v", got)
		}
		l = acquire(t, e2.m, "p", "s")
		defer l.Release()
		if b, err := os.ReadFile(filepath.Join(l.Dir(), "keep")); err != nil || string(b) != "12345" {
			t.Fatalf("the workspace after a restart: %q %v", b, err)
		}
	})
}

func TestLocalBackendContract(t *testing.T) {
	runBackendContract(t, func(t *testing.T, root string, lim config.Sessions, c *clock) *contractEnv {
		e := newContractEnv(t, root, lim, c)
		if _, ok := e.m.backend.(*localBackend); !ok {
			t.Fatalf("backend %T, want local", e.m.backend)
		}
		return e
	})
}

func TestSharedBackendContract(t *testing.T) {
	runBackendContract(t, func(t *testing.T, root string, lim config.Sessions, c *clock) *contractEnv {
		lim.Shared = true
		e := newContractEnv(t, root, lim, c)
		if _, ok := e.m.backend.(*sharedBackend); !ok {
			t.Fatalf("backend %T, want shared", e.m.backend)
		}
		return e
	})
}
