// Package pending is the layer of the suspended-call store (package
// suspend) for requests a running call waits on: an upstream (an MCP
// server's elicitation or sampling request) asked for something mid-call,
// the caller got OUTCOME_PENDING, and the answer comes in a later Execute.
// The store binds the request to the call (principal, session, tool,
// canonical arguments), takes the answer once, caps how many requests one
// principal holds open and ends each at its deadline; this layer keeps
// what cannot leave the process (the opener's state for resuming, the
// schema an answer is checked against, the answer's Go value) and hands
// the answer to the goroutine that waits. An A2A agent's input-required
// task is held the same way, with nobody waiting on the entry: the task
// itself waits on the agent.
//
// Waiting costs no goroutine of its own: the only goroutine blocked is the
// one the upstream already runs for its request.
package pending

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolnexus/toolnexus/internal/suspend"
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
	// MaxPerPrincipal caps the requests of one kind one principal holds
	// open at once.
	MaxPerPrincipal int
}

// The ways an answer or a new request is refused. Their texts are written
// for the caller (they become is_error results).
var (
	ErrTooMany  = errors.New("too many pending requests for this caller (limits.maxPending); answer or let some expire first")
	ErrExpired  = errors.New("the pending request expired before it was answered (limits.pendingTimeout); call the tool again")
	ErrUnknown  = errors.New("no pending request has this id; it was already answered, or never existed")
	ErrMismatch = errors.New("the answer must come with the same tool name and arguments as the call that returned the pending request")
	// ErrElsewhere: with a shared store (cluster.redis) the request is
	// open, but another replica holds the upstream connection that asked
	// it (or held it and is gone).
	// Store.Forward carries such an answer to that replica; this text is
	// only seen without a control plane to carry it.
	ErrElsewhere = errors.New("this pending request is held by another replica (the one whose upstream connection asked it), and this replica cannot forward the answer to it; call the tool again")
)

// Store holds the open requests. The zero value is not usable; use New.
type Store struct {
	s      suspend.Store
	limits atomic.Pointer[Limits]

	// remote carries answers to the replica holding their request
	// (forward.go); nil with one replica.
	remote Remote

	mu   sync.Mutex
	open map[string]*Entry // this process's side of each open request
}

// New makes the layer over s with the given limits (zero fields take the
// defaults).
func New(s suspend.Store, l Limits) *Store {
	p := &Store{s: s, open: map[string]*Entry{}}
	p.SetLimits(l)
	return p
}

// NewLocal is New over a store of its own, for a source used without an
// engine (tests, embedding).
func NewLocal(l Limits) *Store { return New(suspend.NewMemory(nil, 0), l) }

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
	// Kind is the PendingRequest.kind ("elicitation", "sampling", "input").
	Kind string
	// ExpiresAt is when the request stops being answerable.
	ExpiresAt time.Time
	// Resume is the opener's own state for continuing the call.
	Resume any
	// Check is what the opener validates an answer against (an
	// elicitation's requestedSchema); set before the request is shown.
	Check any

	owner tool.Owner
	bind  suspend.Binding
	store *Store
	timer *time.Timer

	mu     sync.Mutex
	answer tool.Answer // set by Deliver before the store wakes the waiter
}

// Binding is the suspended-call binding of a call: its owner, tool and the
// digest of its canonical arguments (so key order and whitespace do not
// matter, and an approval and an elicitation of one call agree).
func Binding(call tool.Call) (suspend.Binding, error) {
	d, err := suspend.Digest(call.Arguments)
	if err != nil {
		return suspend.Binding{}, err
	}
	return suspend.Binding{Principal: call.Owner.Principal, Session: call.Owner.Session, Tool: call.Name, Digest: d}, nil
}

// Open registers a request for the call and starts its deadline. onExpire,
// when not nil, runs once if the deadline passes unanswered (the waiter is
// released first). ctx is the opener's: it bounds the store's operation,
// and its values (not its end) carry to the deadline's check.
func (s *Store) Open(ctx context.Context, call tool.Call, kind string, resume any, onExpire func()) (*Entry, error) {
	b, err := Binding(call)
	if err != nil {
		return nil, err
	}
	l := s.Limits()
	req := suspend.Request{Kind: suspend.Kind(kind), Binding: b, TTL: l.Timeout, MaxPerPrincipal: l.MaxPerPrincipal}
	if s.remote != nil {
		req.Data = []byte(s.remote.Replica()) // where an answer arriving elsewhere is forwarded
	}
	se, err := s.s.Create(ctx, req)
	if errors.Is(err, suspend.ErrCapped) {
		return nil, ErrTooMany
	}
	if err != nil {
		return nil, err
	}
	e := &Entry{ID: se.ID, Kind: kind, ExpiresAt: se.ExpiresAt, Resume: resume, owner: call.Owner, bind: b, store: s}
	// The store decides expiry; this timer only forgets this process's
	// side and tells the opener, once the deadline has passed. It runs
	// after the opener's call returned, so it keeps ctx's values only.
	later := context.WithoutCancel(ctx)
	s.mu.Lock()
	s.open[e.ID] = e
	e.timer = time.AfterFunc(time.Until(se.ExpiresAt), func() {
		// A store that cannot be reached cannot say; the deadline has
		// passed here, so nobody can have answered since it went away.
		got, err := s.s.Get(later, e.ID)
		expired := (err == nil && got.State == suspend.Expired) || errors.Is(err, suspend.ErrUnavailable)
		if expired && s.forget(e) && onExpire != nil {
			onExpire()
		}
	})
	s.mu.Unlock()
	return e, nil
}

// Peek finds the entry an answer is for, checking that the call resuming
// it is the one that suspended: same owner (anyone else is told the id is
// unknown, so ids cannot be probed), same tool, same arguments. A store
// that cannot be reached is an error wrapping suspend.ErrUnavailable: the
// request may well be open, so the caller is told to retry, not that it
// is unknown.
func (s *Store) Peek(ctx context.Context, call tool.Call, id string) (*Entry, error) {
	got, err := s.s.Get(ctx, id)
	if errors.Is(err, suspend.ErrUnavailable) {
		return nil, err
	}
	if err != nil || got.Principal != call.Owner.Principal || got.Session != call.Owner.Session || got.Kind == suspend.KindApproval {
		return nil, ErrUnknown
	}
	if got.State == suspend.Expired {
		return nil, ErrExpired
	}
	s.mu.Lock()
	e, ok := s.open[id]
	s.mu.Unlock()
	if !ok && got.State == suspend.Pending {
		return nil, &elsewhere{owner: string(got.Data)}
	}
	if !ok || got.State != suspend.Pending {
		return nil, ErrUnknown
	}
	if b, err := Binding(call); err != nil || b != e.bind {
		return nil, ErrMismatch
	}
	return e, nil
}

// Owns reports whether the store holds id as an open request bound to
// exactly call: an answer to it resumes a call that already passed every
// check before it suspended.
func (s *Store) Owns(ctx context.Context, call tool.Call, id string) bool {
	_, err := s.Peek(ctx, call, id)
	return err == nil
}

// Deliver hands the answer to the waiter and closes the entry. It fails
// with ErrExpired when the deadline (or a withdrawal) won the race, and
// with the store's error wrapping suspend.ErrUnavailable when the store
// cannot be reached (the request stays open: retry).
func (e *Entry) Deliver(ctx context.Context, a tool.Answer) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, err := e.store.s.Resolve(ctx, e.ID, suspend.Resolution{To: suspend.Answered, By: e.owner.Principal, Require: &e.bind}); err != nil {
		if errors.Is(err, suspend.ErrUnavailable) {
			return err
		}
		return ErrExpired
	}
	e.answer = a
	e.store.forget(e)
	return nil
}

// Wait blocks until the answer comes (ok true), the request expires or
// ctx ends (the upstream withdrew its request, the session ended); then
// ok is false and the entry is closed.
func (e *Entry) Wait(ctx context.Context) (a tool.Answer, ok bool) {
	got, err := e.store.s.Wait(ctx, e.ID)
	if err != nil {
		// ctx may be over: the withdrawal keeps only its values.
		e.Withdraw(context.WithoutCancel(ctx))
		return tool.Answer{}, false
	}
	if got.State != suspend.Answered {
		return tool.Answer{}, false // expired: its timer forgets it and tells the opener
	}
	e.mu.Lock() // Deliver holds it until the answer is set
	defer e.mu.Unlock()
	return e.answer, true
}

// Withdraw closes the entry without an answer (its opener is going away)
// and stops its deadline; a later answer is told the id is unknown. It
// reports whether the entry was still open. A store that cannot be
// reached keeps the entry until its deadline; this process forgets it now.
func (e *Entry) Withdraw(ctx context.Context) bool {
	ok, _ := e.store.s.Withdraw(ctx, e.ID)
	e.store.forget(e)
	return ok
}

// forget drops this process's side of e and stops its timer; it reports
// whether e was still held.
func (s *Store) forget(e *Entry) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[e.ID] != e {
		return false
	}
	delete(s.open, e.ID)
	if e.timer != nil {
		e.timer.Stop()
	}
	return true
}

// Len is how many requests are open (for tests and metrics).
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.open)
}
