package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"
)

// A shared root (sessions.shared) is one volume that every replica mounts,
// so any replica serves any session. What a single replica keeps in memory
// then lives beside the workspaces, and file locks stand in for its mutex:
//
//	.locks/<principal>/<id>       the session's call lock: every replica with
//	                              a call running in the session holds it
//	                              shared; removing the session takes it
//	                              exclusively, so nothing is removed while a
//	                              call runs anywhere
//	.locks/.principals/<principal> taken exclusively to create a session, so
//	                              sessions.max is counted exactly across
//	                              replicas
//	.meta/<principal>/<id>        "created\nbytes\ndirty\n"; its mtime is the
//	                              last use. Locked exclusively to change the
//	                              bytes, so every write of every replica is
//	                              checked against one figure
//
// This replica keeps the sessions it has served in its map as a cache of
// open files: one descriptor for the call lock and one for the metadata,
// so a hot session neither opens nor looks up a path per call.

const locksDir = ".locks"

// principalLocks holds the per-principal creation locks; no principal
// directory can be named this (they are "anonymous" or start with "u-").
const principalLocks = ".principals"

// errGone: the session was removed by another replica while this one had
// no call running in it; the caller starts a fresh one.
var errGone = errors.New("session removed elsewhere")

// errNotIdle: a removal for idleness found the session used after all.
var errNotIdle = errors.New("session in use")

// sharedBackend serves the sessions of a root every replica mounts. Its
// table is this replica's cache of the sessions it serves (their open
// files); the volume is the truth.
type sharedBackend struct {
	env Env
	t   *table
}

// NewSharedBackend serves the sessions under env.Root with every other
// replica that mounts it (sessions.shared). It empties .trash (other
// replicas may be emptying their own entries of it right now); the
// sessions are found on the volume when asked for.
func NewSharedBackend(env Env) (Backend, error) {
	env.emptyTrash()
	return &sharedBackend{env: env, t: newTable()}, nil
}

// Close closes the sessions' files; their last use is recorded at each
// call already.
func (b *sharedBackend) Close() {
	b.t.each(func(s *Session) {
		if s.sh != nil {
			s.sh.close()
		}
	})
}

func (b *sharedBackend) Stats() (int64, int64) { return b.t.n.Load(), b.t.bytes.Load() }

// Acquire implements Backend: a call in a session this replica has open
// takes its call lock (once per replica, while any call runs here); a
// session removed by another replica meanwhile is opened afresh.
func (b *sharedBackend) Acquire(principal, id string) (*Session, error) {
	return b.t.acquire(key{principal, id}, b.env.Now, 0, b.hold, b.open)
}

// sharedFiles is a session's open files on a shared root.
type sharedFiles struct {
	lockPath string
	now      func() time.Time

	// mu orders the call lock's changes between "a call runs here" and
	// "none does" (the reference count alone cannot: a call ending and one
	// starting may interleave). It is taken once per call.
	mu   sync.Mutex
	lock *os.File // the call lock, held shared while held is set
	meta *os.File
	held bool
	gone bool // the files are closed; the session was removed

	// metaMu orders this replica's uses of the metadata's lock: a flock
	// belongs to the open file, so two goroutines sharing the descriptor
	// would both "hold" it. Only writes that ask the quota take it.
	metaMu sync.Mutex

	// dirty: a call here used the workspace since it was last measured.
	dirty atomic.Bool
}

// closeLocked closes the files; closing a descriptor of a lock file or
// the metadata fails only on a bad descriptor, and a lock is released
// with it in any case.
func (sh *sharedFiles) closeLocked() {
	sh.gone = true
	if sh.lock != nil {
		_ = sh.lock.Close()
	}
	if sh.meta != nil {
		_ = sh.meta.Close()
	}
}

func (sh *sharedFiles) close() {
	sh.mu.Lock()
	sh.closeLocked()
	sh.mu.Unlock()
}

// hold takes the call lock for a call that entered the session: the first
// running call on this replica takes it shared, the others find it held.
// The use is recorded at once, so a replica killed mid-call still leaves
// its last use on the volume.
func (b *sharedBackend) hold(s *Session) error {
	sh := s.sh
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.gone {
		return errGone
	}
	if sh.held {
		return nil
	}
	if err := lockShared(sh.lock); err != nil {
		return fmt.Errorf("session %q: cannot lock it: %w", s.id, err)
	}
	if !sameFile(sh.lock, sh.lockPath) {
		sh.closeLocked()
		return errGone
	}
	sh.held = true
	b.env.dropped(OpRelease, touch(sh.meta, b.env.Now()))
	return nil
}

// Release ends a call on a shared root. The last call to end here
// lets go of the call lock; if it can take the lock exclusively no call
// runs in the session on any replica, and it records the measured bytes
// (when any call used the workspace) and the last use.
func (b *sharedBackend) Release(s *Session, touched bool) {
	sh := s.sh
	if touched {
		sh.dirty.Store(true)
	}
	s.lastUsed.Store(b.env.Now().UnixNano())
	if s.refs.Add(-1) != 0 {
		return
	}
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if s.refs.Load() != 0 || !sh.held || sh.gone {
		return
	}
	sh.held = false
	if err := tryLockExclusive(sh.lock); err != nil {
		if !errors.Is(err, errLocked) {
			b.env.dropped(OpRelease, err)
		}
		// Calls run on other replicas: the last of them measures. A
		// command here may have grown the workspace, so tell it to.
		b.env.dropped(OpRelease, unlock(sh.lock))
		if sh.dirty.Swap(false) {
			b.env.dropped(OpRelease, s.updateMeta(func(r *metaRecord) bool { r.dirty = true; return true }))
		}
		return
	}
	b.env.dropped(OpRelease, s.updateMeta(func(r *metaRecord) bool {
		if !sh.dirty.Swap(false) && !r.dirty {
			return false
		}
		r.bytes = measure(s.dir)
		r.dirty = false
		s.setBytes(r.bytes)
		return true
	}))
	b.env.dropped(OpRelease, unlock(sh.lock))
}

// updateMeta changes the metadata under its exclusive lock (change
// reports whether it did) and records now as the last use.
func (s *Session) updateMeta(change func(*metaRecord) bool) error {
	s.sh.metaMu.Lock()
	defer s.sh.metaMu.Unlock()
	f := s.sh.meta
	if err := lockExclusive(f); err != nil {
		return err
	}
	defer unlock(f) //nolint:errcheck // closing would release it as well
	r, err := readMeta(f)
	if err != nil {
		return err
	}
	if !change(&r) {
		return touch(f, s.sh.now())
	}
	return writeMeta(f, r, s.sh.now())
}

// Grow admits n more bytes against the figure on the volume, which
// every replica's writes are checked against and added to under the
// metadata's lock: two replicas writing into one session at once share
// the room left and cannot pass the quota.
func (*sharedBackend) Grow(s *Session, n, limit int64) error {
	var refused error
	err := s.updateMeta(func(r *metaRecord) bool {
		if n > 0 && r.bytes+n > limit {
			refused = quotaError(r.bytes, n, limit)
			return false
		}
		r.bytes = max(r.bytes+n, 0)
		s.setBytes(r.bytes)
		return true
	})
	if refused != nil {
		return refused
	}
	if err != nil {
		return fmt.Errorf("the session's quota cannot be checked: %v", err)
	}
	return nil
}

// Used is the session's bytes as the volume has them.
func (*sharedBackend) Used(s *Session) int64 {
	s.sh.metaMu.Lock()
	defer s.sh.metaMu.Unlock()
	f := s.sh.meta
	if lockShared(f) != nil {
		return s.bytes.Load()
	}
	r, err := readMeta(f)
	_ = unlock(f) // closing would release it as well
	if err != nil {
		return s.bytes.Load()
	}
	s.setBytes(r.bytes)
	return r.bytes
}

// open opens (or adopts) the session s names on the shared root, with
// the caller's call held in it. No replica can remove it meanwhile: the
// call lock is held shared from the start.
func (b *sharedBackend) open(s *Session) error {
	root := b.env.Root
	s.pdir = principalDir(s.principal)
	s.dir = filepath.Join(root, s.pdir, s.id)
	s.meta = filepath.Join(root, metaDir, s.pdir, s.id)
	s.sh = &sharedFiles{lockPath: filepath.Join(root, locksDir, s.pdir, s.id), now: b.env.Now}
	for _, d := range []string{filepath.Dir(s.sh.lockPath), filepath.Dir(s.meta), filepath.Join(root, locksDir, principalLocks)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("session %q: cannot create %s: %w", s.id, d, err)
		}
	}
	lock, err := openLocked(s.sh.lockPath, lockShared)
	if err != nil {
		return fmt.Errorf("session %q: cannot lock it: %w", s.id, err)
	}
	s.sh.lock = lock
	fail := func(err error) error {
		s.sh.closeLocked()
		return err
	}
	if _, err := os.Stat(s.dir); err != nil {
		if err := b.makeSharedDir(key{s.principal, s.id}, s.dir); err != nil {
			// A refused session leaves no lock file behind (unless a
			// replica is creating it right now).
			if tryLockExclusive(lock) == nil {
				if rerr := os.Remove(s.sh.lockPath); rerr != nil {
					b.env.dropped(OpRemove, rerr)
				}
			}
			return fail(err)
		}
	}
	if s.sh.meta, err = os.OpenFile(s.meta, os.O_RDWR|os.O_CREATE, 0o644); err != nil {
		return fail(fmt.Errorf("session %q: cannot record it: %w", s.id, err))
	}
	now := time.Unix(0, s.lastUsed.Load())
	err = s.updateMeta(func(r *metaRecord) bool {
		fresh := r.created == 0 // new, or made by a version without metadata
		if fresh {
			r.created = now.UnixNano()
			r.bytes = measure(s.dir)
		}
		s.created = time.Unix(0, r.created)
		s.bytes.Store(r.bytes) // not listed yet: acquire adds it to the sum
		return fresh
	})
	if err != nil {
		return fail(fmt.Errorf("session %q: cannot record it: %w", s.id, err))
	}
	s.sh.held = true
	return nil
}

// makeSharedDir creates a session's workspace under its principal's
// creation lock, where the principal's sessions on the volume are counted
// against sessions.max. Another replica may have made it meanwhile.
func (b *sharedBackend) makeSharedDir(k key, dir string) error {
	pl, err := openLocked(filepath.Join(b.env.Root, locksDir, principalLocks, principalDir(k.principal)), lockExclusive)
	if err != nil {
		return fmt.Errorf("session %q: cannot lock its principal: %w", k.id, err)
	}
	defer pl.Close()
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if max := b.env.Limits().Max; max > 0 {
		if n := countDirs(filepath.Dir(dir)); n >= max {
			return fmt.Errorf("%w: principal %q already has %d sessions (sessions.max); delete one with DeleteSession or let an idle one expire", ErrTooMany, displayName(k.principal), max)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("session %q: cannot create its workspace: %w", k.id, err)
	}
	return nil
}

func countDirs(dir string) int {
	es, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range es {
		if e.IsDir() && Validate(e.Name()) == nil {
			n++
		}
	}
	return n
}

// remove removes a session from the shared root when no call runs
// in it on any replica (its call lock taken exclusively, without waiting)
// and, for an expiry, when the metadata under that lock still says it is
// idle: exactly one replica removes it, by one rename into .trash. Here,
// the session (when this replica has it open) is marked removed first,
// so no call of this replica enters it meanwhile; nothing else waits.
func (b *sharedBackend) remove(principal, id, reason string, stillIdle func(last time.Time) bool) error {
	root := b.env.Root
	pdir := principalDir(principal)
	dir := filepath.Join(root, pdir, id)
	meta := filepath.Join(root, metaDir, pdir, id)
	lockPath := filepath.Join(root, locksDir, pdir, id)
	notFound := fmt.Errorf("%w: %q has no session %q", ErrNotFound, displayName(principal), id)
	busy := fmt.Errorf("%w: session %q is in use; delete it when its calls are over", ErrBusy, id)

	local := b.t.get(key{principal, id})
	done := func(bool) {}
	if local != nil {
		d, ok := b.t.take(local)
		if !ok {
			return busy
		}
		done = d
	}
	if _, err := os.Stat(dir); err != nil {
		done(false)
		return notFound
	}
	if err := os.MkdirAll(filepath.Dir(lockPath), 0o755); err != nil {
		done(false)
		return err
	}
	lock, err := openLocked(lockPath, tryLockExclusive)
	if err != nil {
		done(false)
		if errors.Is(err, errLocked) {
			return fmt.Errorf("%w: session %q is in use on a replica; delete it when its calls are over", ErrBusy, id)
		}
		return err
	}
	defer lock.Close() // after the lock file is gone
	// No call runs in the session anywhere now, and none can start.
	info, _ := readInfo(principal, id, dir, meta)
	if _, err := os.Stat(dir); err != nil {
		b.env.dropped(OpRemove, removeIfThere(lockPath))
		done(false)
		return notFound
	}
	if stillIdle != nil && !stillIdle(info.LastUsedAt) {
		done(false)
		return errNotIdle
	}
	gone := b.env.moveToTrash(dir)
	b.env.dropped(OpRemove, removeIfThere(meta))
	b.env.dropped(OpRemove, removeIfThere(lockPath))
	if local != nil {
		local.sh.close()
	}
	done(true)
	b.env.finishRemoval(info, reason, dir, gone)
	return nil
}

// removeIfThere removes path; one already gone is no error.
func removeIfThere(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// forgetIdle closes the files of sessions this replica has not used for
// the idle timeout; they stay on the volume for any replica to adopt.
func (b *sharedBackend) forgetIdle(now time.Time, idle time.Duration) {
	b.t.each(func(s *Session) {
		if now.Sub(time.Unix(0, s.lastUsed.Load())) < idle {
			return
		}
		if done, ok := b.t.take(s); ok {
			s.sh.close()
			done(true)
		}
	})
}

// Delete removes a session from the volume, whichever replica made it.
func (b *sharedBackend) Delete(principal, id string) error {
	return b.remove(principal, id, ReasonDeleted, nil)
}

// Sweep removes every session on the volume that is idle everywhere.
// Every replica sweeps; the call lock decides which one removes a session.
func (b *sharedBackend) Sweep(now time.Time, idle time.Duration) {
	root := b.env.Root
	b.forgetIdle(now, idle)
	expired := func(last time.Time) bool { return now.Sub(last) >= idle }
	b.walk("", true, func(principal, pdir, id string) {
		last := lastUse(filepath.Join(root, metaDir, pdir, id), filepath.Join(root, pdir, id))
		if !expired(last) {
			return
		}
		// Busy, used since, or removed by another replica first: the
		// next look decides again. Anything else is the volume failing.
		err := b.remove(principal, id, ReasonExpired, expired)
		if err != nil && !errors.Is(err, ErrBusy) && !errors.Is(err, errNotIdle) && !errors.Is(err, ErrNotFound) {
			b.env.dropped(OpSweep, err)
		}
	})
}

// walk calls fn for every session directory on the volume: the
// principal's, or every principal's when all is set.
func (b *sharedBackend) walk(principal string, all bool, fn func(principal, pdir, id string)) {
	root := b.env.Root
	var pdirs []string
	if all {
		es, err := os.ReadDir(root)
		b.env.dropped(OpSweep, err)
		for _, e := range es {
			if _, ok := principalFromDir(e.Name()); ok && e.IsDir() {
				pdirs = append(pdirs, e.Name())
			}
		}
	} else {
		pdirs = []string{principalDir(principal)}
	}
	for _, pd := range pdirs {
		p, _ := principalFromDir(pd)
		ids, err := os.ReadDir(filepath.Join(root, pd))
		if !errors.Is(err, fs.ErrNotExist) {
			b.env.dropped(OpSweep, err)
		}
		for _, e := range ids {
			if e.IsDir() && Validate(e.Name()) == nil {
				fn(p, pd, e.Name())
			}
		}
	}
}

// List reads the sessions off the volume, whichever replica made them.
func (b *sharedBackend) List(principal string, all bool) []Info {
	root := b.env.Root
	var out []Info
	b.walk(principal, all, func(p, pd, id string) {
		if info, ok := readInfo(p, id, filepath.Join(root, pd, id), filepath.Join(root, metaDir, pd, id)); ok {
			out = append(out, info)
		}
	})
	return out
}

// readInfo describes a session from its files on the volume: one open
// of the metadata gives both its record and its mtime, the last use.
func readInfo(principal, id, dir, meta string) (Info, bool) {
	info := Info{ID: id, Principal: displayName(principal)}
	f, err := os.Open(meta)
	if err != nil {
		// No metadata (yet): the workspace's own times stand in.
		info.LastUsedAt = lastUse(meta, dir)
		info.CreatedAt = info.LastUsedAt
		return info, !info.LastUsedAt.IsZero()
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return info, false
	}
	info.LastUsedAt, info.CreatedAt = fi.ModTime(), fi.ModTime()
	if r, err := readMeta(f); err == nil && r.created != 0 {
		info.CreatedAt, info.Bytes = time.Unix(0, r.created), r.bytes
	}
	return info, true
}

// lastUse is the metadata's mtime, else the workspace's; zero when
// neither exists.
func lastUse(meta, dir string) time.Time {
	if fi, err := os.Stat(meta); err == nil {
		return fi.ModTime()
	}
	if fi, err := os.Stat(dir); err == nil {
		return fi.ModTime()
	}
	return time.Time{}
}
