package session

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// The states of a Session beyond its count of running calls (refs >= 0).
const (
	// stateRemoved: being removed, or removed (no call may enter).
	stateRemoved = -1
	// stateOpening: its workspace is being found or made; callers of the
	// same session wait for it instead of making it twice.
	stateOpening = -2
)

// Session is one session's state.
type Session struct {
	id        string
	principal string
	pdir      string
	dir       string // the workspace, symlinks resolved
	meta      string
	created   time.Time
	sh        *sharedFiles // on a shared root; nil otherwise

	// refs counts the calls running in the session; stateRemoved or
	// stateOpening while a change of state is under way, which settle
	// (closed when it ends) lets a caller wait for.
	refs   atomic.Int32
	settle atomic.Pointer[chan struct{}]

	lastUsed  atomic.Int64 // unix nanoseconds
	persisted atomic.Int64 // the lastUsed last written to the metadata file
	bytes     atomic.Int64
	// total is the table's sum of bytes, which this session's are part
	// of while it is listed; set before the session is published.
	total *atomic.Int64
}

type key struct{ principal, id string }

// enter counts one more running call unless the session is opening or
// removed.
func (s *Session) enter(now time.Time) bool {
	for {
		r := s.refs.Load()
		if r < 0 {
			return false
		}
		if s.refs.CompareAndSwap(r, r+1) {
			s.lastUsed.Store(now.UnixNano())
			return true
		}
	}
}

// wait returns once the change of state under way (if any) is over.
func (s *Session) wait() {
	if ch := s.settle.Load(); ch != nil {
		<-*ch
	}
}

// setBytes replaces the session's bytes, keeping the table's sum.
func (s *Session) setBytes(n int64) {
	old := s.bytes.Swap(n)
	if s.total != nil {
		s.total.Add(n - old)
	}
}

// addBytes adds n (which may be negative) to the session's bytes.
func (s *Session) addBytes(n int64) {
	s.bytes.Add(n)
	if s.total != nil {
		s.total.Add(n)
	}
}

// Info describes the session now.
func (s *Session) Info() Info {
	return Info{ID: s.id, Principal: displayName(s.principal), Bytes: s.bytes.Load(), CreatedAt: s.created,
		LastUsedAt: time.Unix(0, s.lastUsed.Load())}
}

// Dir is the session's workspace directory.
func (s *Session) Dir() string { return s.dir }

// table is the sessions a backend has open in this process. Finding one
// is a sync.Map read; making or removing one is ordered by the session's
// own state, so the table's mutex is held only to count.
type table struct {
	sessions sync.Map // key → *Session

	mu     sync.Mutex     // guards counts; never held across I/O
	counts map[string]int // listed or opening sessions per principal

	n     atomic.Int64 // listed sessions
	bytes atomic.Int64 // their bytes
}

func newTable() *table { return &table{counts: map[string]int{}} }

// acquire enters the session of k with one call: the one listed (after
// hold, the backend's own hold on it, agrees), or a new one that open
// makes — at most one per key at a time, its callers waiting for it, with
// max (sessions.max; 0 = none) counted per principal in this table.
// hold's errGone means the session was removed elsewhere: it is forgotten
// and made anew.
func (t *table) acquire(k key, now func() time.Time, max int, hold, open func(*Session) error) (*Session, error) {
	for {
		if v, ok := t.sessions.Load(k); ok {
			s := v.(*Session)
			if !s.enter(now()) {
				s.wait() // opening or being removed
				continue
			}
			err := hold(s)
			if err == nil {
				return s, nil
			}
			s.refs.Add(-1)
			if !errors.Is(err, errGone) {
				return nil, err
			}
			t.forget(s)
			continue
		}
		s := &Session{id: k.id, principal: k.principal, total: &t.bytes}
		ch := make(chan struct{})
		s.settle.Store(&ch)
		s.refs.Store(stateOpening)
		if _, loaded := t.sessions.LoadOrStore(k, s); loaded {
			continue
		}
		s.lastUsed.Store(now().UnixNano())
		err := t.reserve(k.principal, max)
		if err == nil {
			if err = open(s); err != nil {
				t.unreserve(k.principal)
			}
		}
		if err != nil {
			t.sessions.CompareAndDelete(k, s)
			s.refs.Store(stateRemoved)
			close(ch)
			return nil, err
		}
		t.n.Add(1)
		t.bytes.Add(s.bytes.Load())
		s.refs.Store(1)
		close(ch)
		return s, nil
	}
}

// add lists a session found on disk at start (no call in it).
func (t *table) add(s *Session) {
	s.total = &t.bytes
	t.sessions.Store(key{s.principal, s.id}, s)
	t.mu.Lock()
	t.counts[s.principal]++
	t.mu.Unlock()
	t.n.Add(1)
	t.bytes.Add(s.bytes.Load())
}

// reserve counts one more session of principal, refusing past max.
func (t *table) reserve(principal string, max int) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if max > 0 && t.counts[principal] >= max {
		return fmt.Errorf("%w: principal %q already has %d sessions (sessions.max); delete one with DeleteSession or let an idle one expire", ErrTooMany, displayName(principal), max)
	}
	t.counts[principal]++
	return nil
}

func (t *table) unreserve(principal string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.counts[principal]--; t.counts[principal] <= 0 {
		delete(t.counts, principal)
	}
}

// get is the listed session of k, or nil.
func (t *table) get(k key) *Session {
	if v, ok := t.sessions.Load(k); ok {
		return v.(*Session)
	}
	return nil
}

// take starts removing s: it marks s removed when no call runs in it
// (false otherwise: busy, opening, or already being removed). done ends
// the removal: removed true takes s off the table, false puts it back
// as it was; either way whoever waits on s goes on.
func (t *table) take(s *Session) (done func(removed bool), ok bool) {
	if !s.refs.CompareAndSwap(0, stateRemoved) {
		return nil, false
	}
	// A caller that sees the state before the channel is stored waits on
	// the previous (closed) one and looks again: a moment's spin.
	ch := make(chan struct{})
	s.settle.Store(&ch)
	return func(removed bool) {
		if removed {
			t.unlist(s)
		} else {
			s.refs.Store(0)
		}
		close(ch)
	}, true
}

// forget takes s off the table after it was removed by another replica.
func (t *table) forget(s *Session) {
	if done, ok := t.take(s); ok {
		if s.sh != nil {
			s.sh.close()
		}
		done(true)
		return
	}
	t.unlist(s) // calls still hold it; they find it gone at their next Hold
}

// unlist takes s off the table once.
func (t *table) unlist(s *Session) {
	if !t.sessions.CompareAndDelete(key{s.principal, s.id}, s) {
		return
	}
	t.unreserve(s.principal)
	t.n.Add(-1)
	t.bytes.Add(-s.bytes.Load())
}

// each calls fn for every listed session but those still opening (whose
// fields their opener is writing; the state's store publishes them).
func (t *table) each(fn func(*Session)) {
	t.sessions.Range(func(_, v any) bool {
		if s := v.(*Session); s.refs.Load() != stateOpening {
			fn(s)
		}
		return true
	})
}

// count is the principal's listed and opening sessions.
func (t *table) count(principal string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.counts[principal]
}
