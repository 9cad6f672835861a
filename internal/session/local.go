package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// localBackend keeps the sessions of a root that this replica alone
// serves: its table is the whole truth, and the metadata files only carry
// the creation time and the last use across a restart. Several replicas
// must each have a root of their own (or use a shared root): nothing here
// notices another process using the same one.
type localBackend struct {
	env Env
	t   *table
}

// NewLocalBackend serves the sessions under env.Root as this replica's
// alone: it empties what an earlier run left in .trash and finds the
// sessions it left.
func NewLocalBackend(env Env) (Backend, error) {
	if err := os.RemoveAll(filepath.Join(env.Root, trashDir)); err != nil {
		env.dropped(OpRemove, err)
	}
	b := &localBackend{env: env, t: newTable()}
	b.rediscover()
	return b, nil
}

// Acquire implements Backend: a call in an open session only counts
// itself in.
func (b *localBackend) Acquire(principal, id string) (*Session, error) {
	return b.t.acquire(key{principal, id}, b.env.Now, b.env.Limits().Max, func(*Session) error { return nil }, b.open)
}

// open makes the session's workspace and its metadata; its slot under
// sessions.max is already counted.
func (b *localBackend) open(s *Session) error {
	s.pdir = principalDir(s.principal)
	s.dir = filepath.Join(b.env.Root, s.pdir, s.id)
	s.meta = filepath.Join(b.env.Root, metaDir, s.pdir, s.id)
	s.created = time.Unix(0, s.lastUsed.Load())
	if err := mkdirAll(s.dir); err != nil {
		return fmt.Errorf("session %q: cannot create its workspace: %w", s.id, err)
	}
	if err := s.writeMeta(); err != nil {
		if rerr := os.RemoveAll(s.dir); rerr != nil {
			b.env.dropped(OpRemove, rerr)
		}
		return fmt.Errorf("session %q: cannot record it: %w", s.id, err)
	}
	return nil
}

// mkdirAll is os.MkdirAll, tried again when the principal's directory
// vanished between its steps (the last session of the principal being
// removed at that moment takes the empty directory with it).
func mkdirAll(dir string) error {
	var err error
	for range 3 {
		if err = os.MkdirAll(dir, 0o755); !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return err
}

func (b *localBackend) Release(s *Session, touched bool) {
	if touched {
		s.setBytes(measure(s.dir))
	}
	s.lastUsed.Store(b.env.Now().UnixNano())
	s.refs.Add(-1)
}

func (*localBackend) Grow(s *Session, n, limit int64) error {
	if n < 0 {
		s.addBytes(n)
		return nil
	}
	used := s.bytes.Load()
	if used+n > limit {
		return quotaError(used, n, limit)
	}
	s.addBytes(n)
	return nil
}

func (*localBackend) Used(s *Session) int64 { return s.bytes.Load() }

func (b *localBackend) Stats() (int64, int64) { return b.t.n.Load(), b.t.bytes.Load() }

func (b *localBackend) List(principal string, all bool) []Info {
	var out []Info
	b.t.each(func(s *Session) {
		if (all || s.principal == principal) && s.refs.Load() >= 0 {
			out = append(out, s.Info())
		}
	})
	return out
}

func (b *localBackend) Delete(principal, id string) error {
	s := b.t.get(key{principal, id})
	if s == nil || s.refs.Load() == stateOpening {
		return fmt.Errorf("%w: %q has no session %q", ErrNotFound, displayName(principal), id)
	}
	if !b.remove(s, ReasonDeleted, func(*Session) bool { return true }) {
		if s.refs.Load() < 0 { // the janitor (or another Delete) got there first
			return fmt.Errorf("%w: %q has no session %q", ErrNotFound, displayName(principal), id)
		}
		return fmt.Errorf("%w: session %q is in use; delete it when its calls are over", ErrBusy, id)
	}
	return nil
}

func (b *localBackend) Sweep(now time.Time, idle time.Duration) {
	expired := func(s *Session) bool { return now.Sub(time.Unix(0, s.lastUsed.Load())) >= idle }
	b.t.each(func(s *Session) {
		if s.refs.Load() == 0 && expired(s) && b.remove(s, ReasonExpired, expired) {
			return
		}
		if err := s.persist(); err != nil && !errors.Is(err, fs.ErrNotExist) {
			b.env.dropped(OpPersist, err)
		}
	})
}

// Close records every session's last use, so a restart resumes their
// idle clocks.
func (b *localBackend) Close() {
	b.t.each(func(s *Session) {
		if err := s.persist(); err != nil && !errors.Is(err, fs.ErrNotExist) {
			b.env.dropped(OpPersist, err)
		}
	})
}

// remove deletes s when no call runs in it and cond still holds; it
// reports whether it did. Marked removed, s takes no call while its
// workspace leaves its place (one rename) and its metadata goes; it
// leaves the table after that, so a session no longer listed has no
// directory either, and a new session with the same id waits for it.
func (b *localBackend) remove(s *Session, reason string, cond func(*Session) bool) bool {
	done, ok := b.t.take(s)
	if !ok {
		return false
	}
	if !cond(s) { // used since it was found idle
		done(false)
		return false
	}
	gone := b.env.moveToTrash(s.dir)
	if err := os.Remove(s.meta); err != nil && !errors.Is(err, fs.ErrNotExist) {
		b.env.dropped(OpRemove, err)
	}
	done(true)
	// A principal with no sessions left leaves no empty directory behind
	// (a session of it made at this moment makes the directory again).
	if b.t.count(s.principal) == 0 {
		_ = os.Remove(filepath.Join(b.env.Root, s.pdir)) // fails while not empty: nothing dropped
		_ = os.Remove(filepath.Dir(s.meta))
	}
	b.env.finishRemoval(s.Info(), reason, s.dir, gone)
	return true
}

func (s *Session) writeMeta() error {
	if err := os.MkdirAll(filepath.Dir(s.meta), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(s.meta, []byte(strconv.FormatInt(s.created.UnixNano(), 10)+"\n"), 0o644); err != nil {
		return err
	}
	s.persisted.Store(s.lastUsed.Load() - 1) // the file's mtime is now, not the last use
	return s.persist()
}

// persist records the last use as the metadata file's mtime.
func (s *Session) persist() error {
	last := s.lastUsed.Load()
	if s.persisted.Load() == last {
		return nil
	}
	t := time.Unix(0, last)
	if err := os.Chtimes(s.meta, t, t); err != nil {
		return err
	}
	s.persisted.Store(last)
	return nil
}

// readCreated reads a metadata file's creation time.
func readCreated(meta string) (time.Time, bool) {
	b, err := os.ReadFile(meta)
	if err != nil {
		return time.Time{}, false
	}
	r, ok := parseMeta(b)
	if !ok {
		return time.Time{}, false
	}
	return time.Unix(0, r.created), true
}

// rediscover loads the sessions a previous run left: each workspace
// directory with its metadata (a directory without any starts its idle
// clock at the directory's mtime).
func (b *localBackend) rediscover() {
	root := b.env.Root
	pdirs, err := os.ReadDir(root)
	if err != nil {
		return
	}
	for _, pd := range pdirs {
		principal, ok := principalFromDir(pd.Name())
		if !pd.IsDir() || !ok {
			continue
		}
		ids, err := os.ReadDir(filepath.Join(root, pd.Name()))
		if err != nil {
			b.env.dropped(OpSweep, err)
			continue
		}
		for _, e := range ids {
			if e.IsDir() && Validate(e.Name()) == nil {
				b.t.add(b.found(principal, pd.Name(), e))
			}
		}
	}
}

// found is a session directory a previous run left, with its idle clock
// resumed from its metadata.
func (b *localBackend) found(principal, pdir string, e fs.DirEntry) *Session {
	root := b.env.Root
	s := &Session{id: e.Name(), principal: principal, pdir: pdir,
		dir: filepath.Join(root, pdir, e.Name()), meta: filepath.Join(root, metaDir, pdir, e.Name())}
	last := time.Time{}
	if fi, err := os.Stat(s.meta); err == nil {
		last = fi.ModTime()
		s.created, _ = readCreated(s.meta)
	}
	if last.IsZero() {
		if fi, err := e.Info(); err == nil {
			last = fi.ModTime()
		} else {
			last = b.env.Now()
		}
	}
	if s.created.IsZero() {
		s.created = last
	}
	s.lastUsed.Store(last.UnixNano())
	if _, err := os.Stat(s.meta); err != nil {
		if err := s.writeMeta(); err != nil {
			b.env.dropped(OpPersist, err)
		}
	}
	s.persisted.Store(last.UnixNano())
	s.bytes.Store(measure(s.dir))
	return s
}
