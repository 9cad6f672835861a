package suspend

import (
	"container/heap"
	"context"
	"fmt"
	"sort"
	"sync"
	"time"
)

// DefaultHistory is how many closed entries (resolved, expired, claimed) a
// Memory keeps so that a late answer is told what happened, not "unknown".
const DefaultHistory = 1024

// Memory is the in-process Store. Its one expiry mechanism is a heap of
// deadlines popped under the lock at the start of every operation, so
// state never depends on a timer having run; Wait alone arms a timer, for
// its own wake-up. Nothing here runs on the ordinary call path: only calls
// that suspend take its lock.
type Memory struct {
	now     func() time.Time
	history int

	mu      sync.Mutex
	entries map[string]*memEntry
	seq     uint64
	due     deadlines
	closed  []string           // ids in the order they closed, for the history bound
	open    map[openKey]string // kind+binding → id of the open entry, for Reuse
	byWho   map[kindWho]int    // pending entries per kind and principal
	byKind  map[Kind]int       // pending entries per kind
}

type memEntry struct {
	Entry
	seq  uint64
	done chan struct{} // closed when the entry leaves Pending
}

type openKey struct {
	kind Kind
	b    Binding
}

type kindWho struct {
	kind Kind
	who  string
}

// NewMemory makes an empty in-memory store. now is its clock (time.Now
// when nil); history bounds the closed entries kept (DefaultHistory when
// not positive).
func NewMemory(now func() time.Time, history int) *Memory {
	if now == nil {
		now = time.Now
	}
	if history <= 0 {
		history = DefaultHistory
	}
	return &Memory{now: now, history: history, entries: map[string]*memEntry{},
		open: map[openKey]string{}, byWho: map[kindWho]int{}, byKind: map[Kind]int{}}
}

var _ Store = (*Memory)(nil)

// Create implements Store.
func (m *Memory) Create(_ context.Context, r Request) (Entry, error) {
	if err := validate(r); err != nil {
		return Entry{}, err
	}
	id, err := NewID(r.Kind)
	if err != nil {
		return Entry{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	m.expireDue(now)
	key := openKey{r.Kind, r.Binding}
	if r.Reuse {
		if old, ok := m.entries[m.open[key]]; ok && old.Open() {
			e := old.Entry
			e.Reused = true
			return copyEntry(e), nil
		}
	}
	who := kindWho{r.Kind, r.Principal}
	if r.MaxPerPrincipal > 0 && m.byWho[who] >= r.MaxPerPrincipal {
		return Entry{}, &CapError{Kind: r.Kind, Principal: r.Principal, Max: r.MaxPerPrincipal}
	}
	if r.MaxTotal > 0 && m.byKind[r.Kind] >= r.MaxTotal {
		return Entry{}, &CapError{Kind: r.Kind, Max: r.MaxTotal}
	}
	m.seq++
	e := &memEntry{seq: m.seq, done: make(chan struct{}), Entry: Entry{ID: id, Kind: r.Kind, Binding: r.Binding, State: Pending,
		Data: clone(r.Data), CreatedAt: now, ExpiresAt: now.Add(r.TTL)}}
	m.entries[id] = e
	m.open[key] = id
	m.byWho[who]++
	m.byKind[r.Kind]++
	heap.Push(&m.due, deadline{at: e.ExpiresAt, id: id, seq: e.seq})
	return copyEntry(e.Entry), nil
}

// Get implements Store.
func (m *Memory) Get(_ context.Context, id string) (Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expireDue(m.now())
	e, ok := m.entries[id]
	if !ok {
		return Entry{}, ErrUnknown
	}
	return copyEntry(e.Entry), nil
}

// Resolve implements Store.
func (m *Memory) Resolve(_ context.Context, id string, r Resolution) (Entry, error) {
	if err := validResolution(r); err != nil {
		return Entry{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	m.expireDue(now)
	e, ok := m.entries[id]
	if !ok || (r.Require != nil && r.Require.Principal != e.Principal) {
		return Entry{}, ErrUnknown
	}
	switch {
	case e.State == Expired:
		return copyEntry(e.Entry), ErrExpired
	case e.State != Pending:
		return copyEntry(e.Entry), ErrAlreadyAnswered
	case r.Require != nil && *r.Require != e.Binding:
		return copyEntry(e.Entry), ErrMismatch
	}
	m.leavePending(e, r.To)
	e.By, e.Reason, e.Answer, e.ResolvedAt = r.By, r.Reason, clone(r.Answer), now
	if r.To != Approved {
		m.close(e)
	}
	return copyEntry(e.Entry), nil
}

// Claim implements Store.
func (m *Memory) Claim(_ context.Context, id string, b Binding) (Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expireDue(m.now())
	e, ok := m.entries[id]
	// Who first: a stranger learns nothing about an entry not theirs.
	if !ok || e.Principal != b.Principal {
		return Entry{}, ErrUnknown
	}
	if e.Binding != b {
		return Entry{}, ErrMismatch
	}
	switch e.State {
	case Approved:
		e.State = Claimed
		m.close(e)
		return copyEntry(e.Entry), nil
	case Claimed:
		return copyEntry(e.Entry), ErrClaimed
	case Denied:
		return copyEntry(e.Entry), fmt.Errorf("%w by %s: %s", ErrDenied, e.By, orNone(e.Reason))
	case Expired:
		return copyEntry(e.Entry), ErrExpired
	case Pending:
		return copyEntry(e.Entry), ErrNotYet
	}
	return copyEntry(e.Entry), ErrAlreadyAnswered
}

// Wait implements Store.
func (m *Memory) Wait(ctx context.Context, id string) (Entry, error) {
	for {
		m.mu.Lock()
		now := m.now()
		m.expireDue(now)
		e, ok := m.entries[id]
		if !ok {
			m.mu.Unlock()
			return Entry{}, ErrUnknown
		}
		if e.State != Pending {
			out := copyEntry(e.Entry)
			m.mu.Unlock()
			return out, nil
		}
		done, left := e.done, e.ExpiresAt.Sub(now)
		m.mu.Unlock()
		t := time.NewTimer(left)
		select {
		case <-done:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return Entry{}, ctx.Err()
		}
		t.Stop()
	}
}

// List implements Store.
func (m *Memory) List(_ context.Context, f Filter) ([]Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expireDue(m.now())
	all := make([]*memEntry, 0, len(m.entries))
	for _, e := range m.entries {
		if (f.Kind == "" || e.Kind == f.Kind) && (f.Principal == "" || e.Principal == f.Principal) && (!f.Open || e.Open()) {
			all = append(all, e)
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].seq > all[j].seq })
	out := make([]Entry, len(all))
	for i, e := range all {
		out[i] = copyEntry(e.Entry)
	}
	return out, nil
}

// Lookup implements Store.
func (m *Memory) Lookup(_ context.Context, k Kind, b Binding) (Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expireDue(m.now())
	e, ok := m.entries[m.open[openKey{k, b}]]
	if !ok || !e.Open() {
		return Entry{}, ErrUnknown
	}
	return copyEntry(e.Entry), nil
}

// Withdraw implements Store.
func (m *Memory) Withdraw(_ context.Context, id string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.expireDue(m.now())
	e, ok := m.entries[id]
	if !ok {
		return false, nil
	}
	wasPending := e.State == Pending
	if wasPending {
		m.leavePending(e, Expired)
	}
	if m.open[openKey{e.Kind, e.Binding}] == id {
		delete(m.open, openKey{e.Kind, e.Binding})
	}
	delete(m.entries, id)
	return wasPending, nil
}

// expireDue expires every entry whose deadline is not after now: a pending
// one wakes its waiters, an approved one can no longer be claimed.
func (m *Memory) expireDue(now time.Time) {
	for m.due.Len() > 0 && !now.Before(m.due[0].at) {
		d := heap.Pop(&m.due).(deadline)
		e, ok := m.entries[d.id]
		if !ok || e.seq != d.seq {
			continue
		}
		switch e.State {
		case Pending:
			m.leavePending(e, Expired)
			m.close(e)
		case Approved:
			e.State = Expired
			m.close(e)
		}
	}
}

// leavePending moves e out of Pending to s, updating the counts and waking
// its waiters.
func (m *Memory) leavePending(e *memEntry, s State) {
	e.State = s
	who := kindWho{e.Kind, e.Principal}
	if m.byWho[who]--; m.byWho[who] <= 0 {
		delete(m.byWho, who)
	}
	if m.byKind[e.Kind]--; m.byKind[e.Kind] <= 0 {
		delete(m.byKind, e.Kind)
	}
	close(e.done)
}

// close records that e can no longer be answered or claimed, and drops the
// oldest closed entries past the history bound.
func (m *Memory) close(e *memEntry) {
	if m.open[openKey{e.Kind, e.Binding}] == e.ID {
		delete(m.open, openKey{e.Kind, e.Binding})
	}
	m.closed = append(m.closed, e.ID)
	for len(m.closed) > m.history {
		delete(m.entries, m.closed[0])
		m.closed[0] = ""
		m.closed = m.closed[1:]
	}
}

func orNone(s string) string {
	if s == "" {
		return "no reason given"
	}
	return s
}

func clone(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte(nil), b...)
}

func copyEntry(e Entry) Entry {
	e.Data, e.Answer = clone(e.Data), clone(e.Answer)
	return e
}

type deadline struct {
	at  time.Time
	id  string
	seq uint64
}

// deadlines is a min-heap of entry deadlines (container/heap).
type deadlines []deadline

func (d deadlines) Len() int           { return len(d) }
func (d deadlines) Less(i, j int) bool { return d[i].at.Before(d[j].at) }
func (d deadlines) Swap(i, j int)      { d[i], d[j] = d[j], d[i] }
func (d *deadlines) Push(x any)        { *d = append(*d, x.(deadline)) }
func (d *deadlines) Pop() any {
	old := *d
	x := old[len(old)-1]
	*d = old[:len(old)-1]
	return x
}
