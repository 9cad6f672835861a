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
// serves: the Manager's map is the whole truth, and the metadata files
// only carry the creation time and the last use across a restart.
// Several replicas must each have a root of their own (or use a shared
// root): nothing here notices another process using the same one.
type localBackend struct{ m *Manager }

// newLocalBackend empties what an earlier run left in .trash and finds
// the sessions it left.
func newLocalBackend(m *Manager) *localBackend {
	_ = os.RemoveAll(filepath.Join(m.root, trashDir))
	b := &localBackend{m: m}
	b.rediscover()
	return b
}

// Open creates the session's workspace and its metadata; m.mu is held.
func (b *localBackend) Open(principal, id string) (*Session, error) {
	m := b.m
	if max := m.Limits().Max; max > 0 && m.counts[principal] >= max {
		return nil, fmt.Errorf("%w: principal %q already has %d sessions (sessions.max); delete one with DeleteSession or let an idle one expire", ErrTooMany, displayName(principal), max)
	}
	pdir := principalDir(principal)
	dir := filepath.Join(m.root, pdir, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("session %q: cannot create its workspace: %w", id, err)
	}
	now := m.now()
	s := &Session{m: m, id: id, principal: principal, pdir: pdir, dir: dir,
		meta: filepath.Join(m.root, metaDir, pdir, id), created: now}
	s.lastUsed.Store(now.UnixNano())
	if err := s.writeMeta(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("session %q: cannot record it: %w", id, err)
	}
	s.refs.Store(1)
	return s, nil
}

// Hold has nothing to take: the reference count is the whole hold.
func (*localBackend) Hold(*Session) error { return nil }

func (b *localBackend) Release(s *Session, touched bool) {
	if touched {
		s.bytes.Store(measure(s.dir))
	}
	s.lastUsed.Store(b.m.now().UnixNano())
	s.refs.Add(-1)
}

func (*localBackend) Grow(s *Session, n, limit int64) error {
	if n < 0 {
		s.bytes.Add(n)
		return nil
	}
	used := s.bytes.Load()
	if used+n > limit {
		return quotaError(used, n, limit)
	}
	s.bytes.Add(n)
	return nil
}

func (*localBackend) Used(s *Session) int64 { return s.bytes.Load() }

func (b *localBackend) List(principal string, all bool) []Info {
	var out []Info
	b.m.sessions.Range(func(k, v any) bool {
		if all || k.(key).principal == principal {
			out = append(out, v.(*Session).Info())
		}
		return true
	})
	return out
}

func (b *localBackend) Delete(principal, id string) error {
	m := b.m
	v, ok := m.sessions.Load(key{principal, id})
	if !ok {
		return fmt.Errorf("%w: %q has no session %q", ErrNotFound, displayName(principal), id)
	}
	s := v.(*Session)
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
	b.m.sessions.Range(func(_, v any) bool {
		s := v.(*Session)
		if s.refs.Load() == 0 && expired(s) {
			b.remove(s, ReasonExpired, expired)
			return true
		}
		if err := s.persist(); err != nil && !errors.Is(err, fs.ErrNotExist) {
			b.m.log.Debug("session: cannot record its last use", "session", s.id, "error", err)
		}
		return true
	})
}

// Close records every session's last use, so a restart resumes their
// idle clocks.
func (b *localBackend) Close() {
	b.m.sessions.Range(func(_, v any) bool {
		_ = v.(*Session).persist()
		return true
	})
}

// remove deletes s when no call runs in it and cond still holds; it reports
// whether it did. The workspace is moved aside under the lock (one rename)
// and removed after, so a new session with the same id can start at once.
// Everything that changes a session's place on disk happens under mu, as
// creating one does.
func (b *localBackend) remove(s *Session, reason string, cond func(*Session) bool) bool {
	m := b.m
	m.mu.Lock()
	if !cond(s) || !s.refs.CompareAndSwap(0, -1) {
		m.mu.Unlock()
		return false
	}
	// The workspace leaves its place before the session leaves the list,
	// so a session no longer listed has no directory either.
	gone := m.moveToTrash(s.dir)
	_ = os.Remove(s.meta)
	m.unlist(s)
	// A principal with no sessions left leaves no empty directory behind
	// (under the lock: a session being created needs its parent).
	_ = os.Remove(filepath.Join(m.root, s.pdir))
	_ = os.Remove(filepath.Dir(s.meta))
	m.mu.Unlock()
	m.finishRemoval(s.Info(), reason, s.dir, gone)
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
	m := b.m
	pdirs, err := os.ReadDir(m.root)
	if err != nil {
		return
	}
	for _, pd := range pdirs {
		principal, ok := principalFromDir(pd.Name())
		if !pd.IsDir() || !ok {
			continue
		}
		ids, err := os.ReadDir(filepath.Join(m.root, pd.Name()))
		if err != nil {
			continue
		}
		for _, e := range ids {
			if !e.IsDir() || Validate(e.Name()) != nil {
				continue
			}
			s := &Session{m: m, id: e.Name(), principal: principal, pdir: pd.Name(),
				dir: filepath.Join(m.root, pd.Name(), e.Name()), meta: filepath.Join(m.root, metaDir, pd.Name(), e.Name())}
			last := time.Time{}
			if fi, err := os.Stat(s.meta); err == nil {
				last = fi.ModTime()
				s.created, _ = readCreated(s.meta)
			}
			if last.IsZero() {
				if fi, err := e.Info(); err == nil {
					last = fi.ModTime()
				} else {
					last = m.now()
				}
			}
			if s.created.IsZero() {
				s.created = last
			}
			s.lastUsed.Store(last.UnixNano())
			if _, err := os.Stat(s.meta); err != nil {
				_ = s.writeMeta()
			}
			s.persisted.Store(last.UnixNano())
			s.bytes.Store(measure(s.dir))
			m.sessions.Store(key{principal, s.id}, s)
			m.counts[principal]++
		}
	}
}
