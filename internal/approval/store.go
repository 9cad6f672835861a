// Package approval holds the calls a policy sent to a human: each pending
// approval is bound to one exact call (tool, canonical arguments, caller,
// policy), can be decided once by someone other than the caller, and
// resumes exactly one run of that call. The store is in memory and
// bounded; a restart forgets it, so what was pending is denied.
package approval

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
)

// Status is where an approval stands.
type Status string

// The statuses.
const (
	Pending  Status = "pending"
	Approved Status = "approved"
	Denied   Status = "denied"
	Expired  Status = "expired"
	Used     Status = "used" // approved, and its call has run
)

// Request is the call an approval is for.
type Request struct {
	Tool      string
	Principal string
	// Digest is the hex SHA-256 of the canonical arguments (Digest).
	Digest string
	// Policy is the @id of the policy that asked for the approval.
	Policy string
	// Summary is the arguments as a person reads them.
	Summary string
}

// Entry is one approval.
type Entry struct {
	ID string
	Request
	Status    Status
	CreatedAt time.Time
	ExpiresAt time.Time
	DecidedBy string
	DecidedAt time.Time
	Reason    string
}

// The ways the store refuses, each with its own text for the caller.
var (
	ErrFull        = errors.New("too many approvals are pending (policy.maxPending); ask an approver to decide some, then retry")
	ErrUnknown     = errors.New("no such approval (it may predate a restart, which denies every pending approval)")
	ErrSelf        = errors.New("the principal that made a call cannot approve or deny it")
	ErrDecided     = errors.New("the approval has already been decided")
	ErrExpired     = errors.New("the approval expired before it was decided")
	ErrDeniedCall  = errors.New("the approval was denied")
	ErrNotYet      = errors.New("the approval is still pending; retry once an approver has decided")
	ErrUsed        = errors.New("the approval was already used: it runs its call once")
	ErrOtherCaller = errors.New("the approval belongs to another principal")
	ErrOtherTool   = errors.New("the approval is for another tool")
	ErrOtherArgs   = errors.New("the approval is for other arguments: it covers exactly the arguments it was asked for")
)

// Store is the bounded in-memory set of approvals. Its lock is only taken
// on calls that need an approval, never on the ordinary call path.
type Store struct {
	mu      sync.Mutex
	entries map[string]*entry
	pending int
	max     int
	timeout time.Duration
	now     func() time.Time
	seq     uint64
}

type entry struct {
	Entry
	seq     uint64        // creation order, for listing newest first
	decided chan struct{} // closed when decided
}

// New makes a store holding at most maxPending undecided approvals, each
// decidable for timeout. now is the clock (time.Now when nil).
func New(maxPending int, timeout time.Duration, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{entries: map[string]*entry{}, max: maxPending, timeout: timeout, now: now}
}

// SetLimits changes the bound and timeout for approvals made from now on.
func (s *Store) SetLimits(maxPending int, timeout time.Duration) {
	s.mu.Lock()
	s.max, s.timeout = maxPending, timeout
	s.mu.Unlock()
}

// Create records a new pending approval.
func (s *Store) Create(r Request) (Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.expireLocked(now)
	if s.pending >= s.max {
		return Entry{}, ErrFull
	}
	s.seq++
	e := &entry{Entry: Entry{ID: newID(), Request: r, Status: Pending, CreatedAt: now, ExpiresAt: now.Add(s.timeout)}, seq: s.seq, decided: make(chan struct{})}
	s.entries[e.ID] = e
	s.pending++
	s.trimLocked()
	return e.Entry, nil
}

// Decide approves or denies a pending approval on behalf of decider.
func (s *Store) Decide(id, decider string, approve bool, reason string) (Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.expireLocked(now)
	e, ok := s.entries[id]
	switch {
	case !ok:
		return Entry{}, ErrUnknown
	case decider == e.Principal:
		return e.Entry, ErrSelf
	case e.Status == Expired:
		return e.Entry, ErrExpired
	case e.Status != Pending:
		return e.Entry, ErrDecided
	}
	e.Status = Denied
	if approve {
		e.Status = Approved
	}
	e.DecidedBy, e.DecidedAt, e.Reason = decider, now, reason
	s.pending--
	close(e.decided)
	return e.Entry, nil
}

// Redeem uses an approved approval for one call: the same principal, tool
// and argument digest. It succeeds once.
func (s *Store) Redeem(id, principal, tool, digest string) (Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked(s.now())
	e, ok := s.entries[id]
	if !ok {
		return Entry{}, ErrUnknown
	}
	// Who and what first: a stranger learns nothing about the state of
	// an approval that is not theirs.
	switch {
	case e.Principal != principal:
		return Entry{}, ErrOtherCaller
	case e.Tool != tool:
		return Entry{}, ErrOtherTool
	case e.Digest != digest:
		return Entry{}, ErrOtherArgs
	}
	switch e.Status {
	case Approved:
		e.Status = Used
		return e.Entry, nil
	case Used:
		return e.Entry, ErrUsed
	case Denied:
		return e.Entry, fmt.Errorf("%w by %s: %s", ErrDeniedCall, e.DecidedBy, orNone(e.Reason))
	case Expired:
		return e.Entry, ErrExpired
	}
	return e.Entry, ErrNotYet
}

// Wait blocks until the approval is decided, expires, or ctx ends.
func (s *Store) Wait(ctx context.Context, id string) (Entry, error) {
	s.mu.Lock()
	e, ok := s.entries[id]
	var left time.Duration
	var ch chan struct{}
	if ok {
		left, ch = e.ExpiresAt.Sub(s.now()), e.decided
	}
	s.mu.Unlock()
	if !ok {
		return Entry{}, ErrUnknown
	}
	t := time.NewTimer(left)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	case <-ctx.Done():
		return Entry{}, ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked(s.now())
	return e.Entry, nil
}

// List is every approval held, newest first.
func (s *Store) List() []Entry {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked(s.now())
	all := make([]*entry, 0, len(s.entries))
	for _, e := range s.entries {
		all = append(all, e)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].seq > all[j].seq })
	out := make([]Entry, len(all))
	for i, e := range all {
		out[i] = e.Entry
	}
	return out
}

// Get is one approval.
func (s *Store) Get(id string) (Entry, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked(s.now())
	e, ok := s.entries[id]
	if !ok {
		return Entry{}, false
	}
	return e.Entry, true
}

func (s *Store) expireLocked(now time.Time) {
	// An approval is good until ExpiresAt: undecided, or approved and not
	// yet used. Past it, both are expired.
	for _, e := range s.entries {
		if now.Before(e.ExpiresAt) {
			continue
		}
		switch e.Status {
		case Pending:
			e.Status = Expired
			s.pending--
			close(e.decided)
		case Approved:
			e.Status = Expired
		}
	}
}

// trimLocked keeps the decided history bounded too: at most max decided
// entries besides the pending ones, the oldest dropped first.
func (s *Store) trimLocked() {
	over := len(s.entries) - s.pending - s.max
	if over <= 0 {
		return
	}
	done := make([]*entry, 0, len(s.entries)-s.pending)
	for _, e := range s.entries {
		if e.Status != Pending {
			done = append(done, e)
		}
	}
	sort.Slice(done, func(i, j int) bool { return done[i].seq < done[j].seq })
	for _, e := range done[:over] {
		delete(s.entries, e.ID)
	}
}

func orNone(s string) string {
	if s == "" {
		return "no reason given"
	}
	return s
}

// newID is 80 random bits, readable and safe in a URL or a shell.
func newID() string {
	var b [10]byte
	_, _ = rand.Read(b[:])
	return "apr_" + base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b[:])
}
