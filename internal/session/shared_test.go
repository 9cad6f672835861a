package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/config"
)

// replicas are managers sharing one root and one clock, as replicas
// sharing a volume do; the file locks between them are the real ones
// (two managers' descriptors conflict exactly as two hosts' do).
type replicas struct {
	ms      []*Manager
	clock   *clock
	root    string
	deleted atomic.Int32
}

func newReplicas(t *testing.T, n int, lim config.Sessions) *replicas {
	t.Helper()
	r := &replicas{clock: &clock{}, root: t.TempDir()}
	// The metadata's mtime is the last use: keep the clock near the real
	// one so the file system takes it as set.
	r.clock.ns.Store(time.Now().Truncate(time.Second).UnixNano())
	lim.Shared = true
	if lim.IdleTimeout == 0 {
		lim.IdleTimeout = time.Hour
	}
	for range n {
		m, err := New(Options{Root: r.root, Limits: lim, Now: r.clock.now,
			OnDelete: func(Info, string) { r.deleted.Add(1) }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(m.Close)
		r.ms = append(r.ms, m)
	}
	return r
}

func TestSharedSessionIsServedByEveryReplica(t *testing.T) {
	t.Parallel()
	r := newReplicas(t, 3, config.Sessions{})
	a, b, c := r.ms[0], r.ms[1], r.ms[2]
	l := acquire(t, a, "agent", "s1")
	if err := os.WriteFile(filepath.Join(l.Dir(), "notes.md"), []byte("step 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l.Release()
	created := l.Session().Info().CreatedAt

	lb := acquire(t, b, "agent", "s1")
	got, err := os.ReadFile(filepath.Join(lb.Dir(), "notes.md"))
	if err != nil || string(got) != "step 1\n" {
		t.Fatalf("replica b reads %q, %v", got, err)
	}
	if lb.Session().Info().CreatedAt != created {
		t.Errorf("replica b: created %v, replica a made it at %v", lb.Session().Info().CreatedAt, created)
	}
	lb.Release()

	// A replica that never served it lists it, with its measured bytes.
	list := c.List("", true)
	if len(list) != 1 || list[0].ID != "s1" || list[0].Principal != "agent" || list[0].Bytes != 7 || !list[0].CreatedAt.Equal(created) {
		t.Fatalf("replica c lists %+v", list)
	}
	if other := c.List("someone-else", false); len(other) != 0 {
		t.Errorf("another principal sees %+v", other)
	}
}

func TestSharedQuotaHoldsAcrossReplicas(t *testing.T) {
	t.Parallel()
	const limit, chunk = 1000, 10
	r := newReplicas(t, 2, config.Sessions{MaxBytes: limit})
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for i, m := range r.ms {
		for j := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l, err := m.Acquire("agent", "q")
				if err != nil {
					t.Error(err)
					return
				}
				defer l.Release()
				// Each writer appends to a file of its own what the quota
				// admits, as the write tool does after asking.
				f, err := os.Create(filepath.Join(l.Dir(), fmt.Sprintf("w%d-%d", i, j)))
				if err != nil {
					t.Error(err)
					return
				}
				defer f.Close()
				for range 50 {
					if l.Grow(chunk) == nil {
						admitted.Add(chunk)
						if _, err := f.Write(make([]byte, chunk)); err != nil {
							t.Error(err)
						}
					}
				}
			}()
		}
	}
	wg.Wait()
	// 400 writes of 10 bytes from two replicas: exactly the quota's worth
	// are admitted, and the figure on the volume says so.
	if admitted.Load() != limit {
		t.Fatalf("admitted %d bytes across replicas; the quota is %d", admitted.Load(), limit)
	}
	if got := measure(filepath.Join(r.root, principalDir("agent"), "q")); got != limit {
		t.Fatalf("the workspace holds %d bytes; the quota is %d", got, limit)
	}
	l := acquire(t, r.ms[1], "agent", "q")
	defer l.Release()
	if err := l.Grow(1); err == nil {
		t.Error("a write past the quota was admitted")
	}
	if got := l.FileSizeLimit(); got != 0 {
		t.Errorf("FileSizeLimit = %d with the quota used up", got)
	}
}

func TestSharedMeasurementCorrectsTheFigure(t *testing.T) {
	t.Parallel()
	r := newReplicas(t, 2, config.Sessions{MaxBytes: 100})
	la := acquire(t, r.ms[0], "agent", "m")
	lb := acquire(t, r.ms[1], "agent", "m")
	// A command on replica b writes 60 bytes without asking (as bash
	// does) while replica a's call still runs; b is not the last out.
	if err := os.WriteFile(filepath.Join(lb.Dir(), "out"), make([]byte, 60), 0o644); err != nil {
		t.Fatal(err)
	}
	lb.Release()
	la.Release() // the last out measures, though its own call wrote nothing
	l := acquire(t, r.ms[0], "agent", "m")
	defer l.Release()
	if got := l.FileSizeLimit(); got != 40 {
		t.Errorf("after b's command wrote 60 bytes, %d are left of 100", got)
	}
}

func TestSharedMaxCountsTheWholeRoot(t *testing.T) {
	t.Parallel()
	r := newReplicas(t, 2, config.Sessions{Max: 2})
	a, b := r.ms[0], r.ms[1]
	acquire(t, a, "agent", "s1").Release()
	acquire(t, b, "agent", "s2").Release()
	if _, err := a.Acquire("agent", "s3"); !errors.Is(err, ErrTooMany) {
		t.Fatalf("a third session across two replicas: %v", err)
	}
	// Existing sessions keep working wherever they land; another
	// principal has a cap of its own.
	acquire(t, b, "agent", "s1").Release()
	acquire(t, a, "agent", "s2").Release()
	acquire(t, a, "other", "s3").Release()
	if _, err := os.Stat(filepath.Join(r.root, locksDir, principalDir("agent"), "s3")); !os.IsNotExist(err) {
		t.Errorf("a refused session left its lock file: %v", err)
	}
}

func TestSharedDeleteWorksFromAnyReplica(t *testing.T) {
	t.Parallel()
	r := newReplicas(t, 2, config.Sessions{})
	a, b := r.ms[0], r.ms[1]
	l := acquire(t, a, "agent", "d")
	if err := os.WriteFile(filepath.Join(l.Dir(), "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := b.Delete("agent", "d"); !errors.Is(err, ErrBusy) {
		t.Fatalf("delete on b while a's call runs: %v", err)
	}
	l.Release()
	if err := b.Delete("agent", "d"); err != nil {
		t.Fatalf("delete on b once idle: %v", err)
	}
	if err := a.Delete("agent", "d"); !errors.Is(err, ErrNotFound) {
		t.Errorf("second delete on a: %v", err)
	}
	if r.deleted.Load() != 1 {
		t.Errorf("%d deletions reported", r.deleted.Load())
	}
	// Replica a still has the session's files open from before; its next
	// call finds the session gone and starts it afresh.
	l = acquire(t, a, "agent", "d")
	defer l.Release()
	if _, err := os.Stat(filepath.Join(l.Dir(), "f")); !os.IsNotExist(err) {
		t.Errorf("the deleted session's file is back: %v", err)
	}
	if got := b.List("agent", false); len(got) != 1 {
		t.Errorf("b lists %+v after a started the session again", got)
	}
}

func TestSharedJanitorSparesACallOnAnotherReplica(t *testing.T) {
	t.Parallel()
	r := newReplicas(t, 3, config.Sessions{IdleTimeout: time.Minute})
	busy := r.ms[0]
	l := acquire(t, busy, "agent", "j")
	dir := l.Dir()
	// The call runs far past the idle timeout; every replica sweeps.
	r.clock.advance(10 * time.Minute)
	for _, m := range r.ms {
		m.Sweep()
	}
	if _, err := os.Stat(dir); err != nil || r.deleted.Load() != 0 {
		t.Fatalf("a session with a call running on a replica was removed: %v, %d deletions", err, r.deleted.Load())
	}
	l.Release()
	// Just used: not idle, whichever replica looks.
	r.clock.advance(time.Second)
	r.ms[2].Sweep()
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("removed a second after its last call: %v", err)
	}
	// Idle past the timeout: all three sweep at once, one removes it.
	r.clock.advance(2 * time.Minute)
	var wg sync.WaitGroup
	for _, m := range r.ms {
		wg.Add(1)
		go func() { defer wg.Done(); m.Sweep() }()
	}
	wg.Wait()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the idle session is still there: %v", err)
	}
	if got := r.deleted.Load(); got != 1 {
		t.Errorf("removed %d times; want exactly once", got)
	}
	if got := r.ms[1].List("", true); len(got) != 0 {
		t.Errorf("listed after removal: %+v", got)
	}
}

// Calls, deletions and sweeps from three replicas at once: every call
// that got a lease finds its workspace in place until it releases it.
func TestSharedRacesKeepRunningCallsWhole(t *testing.T) {
	t.Parallel()
	r := newReplicas(t, 3, config.Sessions{IdleTimeout: time.Millisecond})
	var wg sync.WaitGroup
	for i, m := range r.ms {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for n := range 200 {
				l, err := m.Acquire("agent", "hot")
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := os.Stat(l.Dir()); err != nil {
					t.Errorf("replica %d call %d: workspace missing while leased: %v", i, n, err)
				}
				r.clock.advance(time.Millisecond)
				l.Release()
			}
		}()
		go func() {
			defer wg.Done()
			for range 100 {
				m.Sweep()
				_ = m.Delete("agent", "hot")
			}
		}()
	}
	wg.Wait()
}

// The lock rule (backend.go): nothing waits on the volume while holding a
// lock other sessions need. Here the volume is slow for one principal —
// its creation lock is held elsewhere, as a replica stuck on NFS would
// hold it — so making its new session blocks in flock; meanwhile another
// principal's new session, a call in an existing one, a Delete, a List
// and a Sweep all finish. (They used to queue behind the Manager's mutex,
// held across the stuck flock.)
func TestSlowVolumeHoldsUpNoOtherSession(t *testing.T) {
	r := newReplicas(t, 1, config.Sessions{})
	m := r.ms[0]
	acquire(t, m, "carol", "old").Release()
	acquire(t, m, "dave", "gone").Release()
	stuck, err := openLocked(filepath.Join(m.Root(), locksDir, principalLocks, principalDir("alice")), lockExclusive)
	if err != nil {
		t.Fatal(err)
	}
	made := make(chan error, 1)
	go func() {
		l, err := m.Acquire("alice", "new")
		if err == nil {
			l.Release()
		}
		made <- err
	}()
	b := m.backend.(*sharedBackend)
	for s := b.t.get(key{"alice", "new"}); s == nil || s.refs.Load() != stateOpening; s = b.t.get(key{"alice", "new"}) {
		time.Sleep(5 * time.Millisecond) // until alice's session is being made
	}
	time.Sleep(50 * time.Millisecond) // and stuck in flock
	others := make(chan error, 1)
	go func() {
		others <- func() error {
			l, err := m.Acquire("bob", "fresh")
			if err != nil {
				return fmt.Errorf("bob's new session: %w", err)
			}
			l.Release()
			acquire(t, m, "carol", "old").Release()
			if err := m.Delete("dave", "gone"); err != nil {
				return fmt.Errorf("Delete: %w", err)
			}
			if n := len(m.List("", true)); n != 2 {
				return fmt.Errorf("List: %d sessions, want carol's and bob's", n)
			}
			m.Sweep()
			return nil
		}()
	}()
	select {
	case err := <-others:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("other sessions waited on alice's stuck creation")
	}
	select {
	case err := <-made:
		t.Fatalf("alice's session was made while its creation lock was held: %v", err)
	default:
	}
	stuck.Close()
	if err := <-made; err != nil {
		t.Fatalf("alice's session once the volume answered: %v", err)
	}
}
