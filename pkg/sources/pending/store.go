// Package pending holds the requests that suspended tool calls wait on: an
// upstream (an MCP server's elicitation or sampling request) asked for
// something mid-call, the caller got OUTCOME_PENDING, and the answer comes
// in a later Execute. The store hands that answer to whoever waits on the
// request, refuses it from anyone but the call's owner, bounds how many
// requests one principal may hold open, and ends each request at its
// deadline. An A2A agent's input-required task is held the same way, with
// nobody waiting on the entry: the task itself waits on the agent.
//
// Waiting costs no goroutine of its own: an entry is a channel and a
// time.AfterFunc timer; the only goroutine blocked is the one the upstream
// already runs for its request.
package pending

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// The defaults of limits.pendingTimeout and limits.maxPending.
const (
	DefaultTimeout = 10 * time.Minute
	DefaultMax     = 100
)

// Limits bound the store.
type Limits struct {
	// Timeout is how long a request stays answerable.
	Timeout time.Duration
	// MaxPerPrincipal caps the requests one principal holds open at once.
	MaxPerPrincipal int
}

// The ways an answer or a new request is refused. Their texts are written
// for the caller (they become is_error results).
var (
	ErrTooMany  = errors.New("too many pending requests for this caller (limits.maxPending); answer or let some expire first")
	ErrExpired  = errors.New("the pending request expired before it was answered (limits.pendingTimeout); call the tool again")
	ErrUnknown  = errors.New("no pending request has this id; it was already answered, or never existed")
	ErrMismatch = errors.New("the answer must come with the same tool name and arguments as the call that returned the pending request")
)

// gonesCap bounds the memory of expired ids (kept to tell "expired" from
// "unknown"); past it the oldest half is forgotten.
const gonesCap = 4096

// Store holds the open requests. The zero value is not usable; use New.
type Store struct {
	limits atomic.Pointer[Limits]

	mu      sync.Mutex
	entries map[string]*Entry
	count   map[string]int // open requests per principal
	gone    map[string]goneID
	goneSeq uint64
}

// goneID is an expired id: when it went, and whose it was.
type goneID struct {
	seq   uint64
	owner tool.Owner
}

// New makes a store with the given limits (zero fields take the defaults).
func New(l Limits) *Store {
	s := &Store{entries: map[string]*Entry{}, count: map[string]int{}, gone: map[string]goneID{}}
	s.SetLimits(l)
	return s
}

// SetLimits changes the limits for requests opened from now on (a reload).
func (s *Store) SetLimits(l Limits) {
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	if l.MaxPerPrincipal <= 0 {
		l.MaxPerPrincipal = DefaultMax
	}
	s.limits.Store(&l)
}

// Limits returns the current limits.
func (s *Store) Limits() Limits { return *s.limits.Load() }

// Entry is one open request.
type Entry struct {
	// ID is what the caller echoes in Answer.id.
	ID string
	// Kind is the PendingRequest.kind ("elicitation", "sampling").
	Kind string
	// ExpiresAt is when the request stops being answerable.
	ExpiresAt time.Time
	// Resume is the opener's own state for continuing the call.
	Resume any
	// Check is what the opener validates an answer against (an
	// elicitation's requestedSchema); set before the request is shown.
	Check any

	owner  tool.Owner
	tool   string
	digest [sha256.Size]byte
	answer chan reply // capacity 1: the answer, or the expiry
	timer  *time.Timer
	store  *Store
}

type reply struct {
	a       tool.Answer
	expired bool
}

// Open registers a request for the call (its owner, tool name and
// arguments) and starts its deadline. onExpire, when not nil, runs once if
// the deadline passes unanswered (the waiter is released first).
func (s *Store) Open(call tool.Call, kind string, resume any, onExpire func()) (*Entry, error) {
	l := s.Limits()
	e := &Entry{ID: kind + "-" + randomID(), Kind: kind, Resume: resume, owner: call.Owner, tool: call.Name,
		digest: digest(call.Arguments), answer: make(chan reply, 1), store: s, ExpiresAt: time.Now().Add(l.Timeout)}
	s.mu.Lock()
	if s.count[e.owner.Principal] >= l.MaxPerPrincipal {
		s.mu.Unlock()
		return nil, ErrTooMany
	}
	s.count[e.owner.Principal]++
	s.entries[e.ID] = e
	s.mu.Unlock()
	e.timer = time.AfterFunc(l.Timeout, func() {
		if s.remove(e, true) {
			e.answer <- reply{expired: true}
			if onExpire != nil {
				onExpire()
			}
		}
	})
	return e, nil
}

// Peek finds the entry an answer is for, checking that the call resuming
// it is the one that suspended: same owner (anyone else is told the id is
// unknown, so ids cannot be probed), same tool, same arguments.
func (s *Store) Peek(call tool.Call, id string) (*Entry, error) {
	s.mu.Lock()
	e, ok := s.entries[id]
	g, expired := s.gone[id]
	s.mu.Unlock()
	if !ok || e.owner != call.Owner {
		// Only its owner is told it expired: to anyone else an expired
		// id reads like one that never existed, as an open one does.
		if expired && !ok && g.owner == call.Owner {
			return nil, ErrExpired
		}
		return nil, ErrUnknown
	}
	if !time.Now().Before(e.ExpiresAt) {
		// Past its deadline, even if the timer has not run yet.
		return nil, ErrExpired
	}
	if e.tool != call.Name || e.digest != digest(call.Arguments) {
		return nil, ErrMismatch
	}
	return e, nil
}

// Deliver hands the answer to the waiter and closes the entry. It fails
// with ErrExpired when the deadline won the race.
func (e *Entry) Deliver(a tool.Answer) error {
	if !e.store.remove(e, false) {
		return ErrExpired
	}
	e.timer.Stop()
	e.answer <- reply{a: a}
	return nil
}

// Wait blocks until the answer comes (ok true), the request expires or
// done is closed (the upstream withdrew its request, the session ended);
// then ok is false and the entry is closed.
func (e *Entry) Wait(done <-chan struct{}) (a tool.Answer, ok bool) {
	select {
	case r := <-e.answer:
		return r.a, !r.expired
	case <-done:
		if e.store.remove(e, false) {
			e.timer.Stop()
		}
		return tool.Answer{}, false
	}
}

// Withdraw closes the entry without an answer (its opener is going away)
// and stops its deadline; a later answer is told the id is unknown. It
// reports whether the entry was still open.
func (e *Entry) Withdraw() bool {
	if !e.store.remove(e, false) {
		return false
	}
	e.timer.Stop()
	return true
}

// remove closes e; it reports whether e was still open. An expired id is
// remembered so a late answer is told so.
func (s *Store) remove(e *Entry, expired bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.entries[e.ID] != e {
		return false
	}
	delete(s.entries, e.ID)
	if s.count[e.owner.Principal]--; s.count[e.owner.Principal] <= 0 {
		delete(s.count, e.owner.Principal)
	}
	if expired {
		s.goneSeq++
		s.gone[e.ID] = goneID{seq: s.goneSeq, owner: e.owner}
		if len(s.gone) > gonesCap {
			for id, g := range s.gone {
				if g.seq <= s.goneSeq-gonesCap/2 {
					delete(s.gone, id)
				}
			}
		}
	}
	return true
}

// Len is how many requests are open (for tests and metrics).
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}

// digest fingerprints arguments so that whitespace does not matter but
// every value does.
func digest(args json.RawMessage) [sha256.Size]byte {
	var buf bytes.Buffer
	if len(args) == 0 || json.Compact(&buf, args) != nil {
		buf.Reset()
		if len(args) == 0 {
			buf.WriteString("{}")
		} else {
			buf.Write(args)
		}
	}
	return sha256.Sum256(buf.Bytes())
}

func randomID() string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("pending: no randomness: %v", err)) // crypto/rand never fails on Linux
	}
	return hex.EncodeToString(b[:])
}
