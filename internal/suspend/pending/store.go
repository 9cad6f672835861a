// Package pending is the layer of the suspended-call store (package
// suspend) for requests a running call waits on: an upstream (an MCP
// server's elicitation or sampling request) asked for something mid-call,
// the caller got OUTCOME_PENDING, and the answer comes in a later Execute.
// The store binds the request to the call (principal, session, tool,
// canonical arguments: suspend.Bind), takes the answer once, caps how many
// requests one principal holds open and ends each at its deadline.
//
// A request is one of two sorts:
//
//   - live (Open): what resumes it cannot leave the process that opened
//     it — a stdio server's request held on its connection, an A2A task's
//     wait with its expiry. This layer keeps that state (a Resumer), the
//     schema an answer is checked against and the answer's Go value, and
//     hands the answer to the goroutine that waits; an answer that reaches
//     another replica is forwarded to the opener (forward.go).
//   - portable (OpenPortable): everything needed to resume is bytes kept
//     in the store's entry (an upstream's 2026-07-28 requestState and
//     input requests, a question), so any replica sharing the store
//     resumes it itself, through the Restore of the source it reaches.
//
// Store.Answer is the one way an answer is taken: it finds the request,
// checks the call is the one that suspended, forwards a live request held
// elsewhere, and calls the request's Resumer.
//
// Waiting costs no goroutine of its own: the only goroutine blocked is the
// one the upstream already runs for its request.
package pending

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
// for the caller (they become is_error results); each is the store's error
// of the same meaning (errors.Is(ErrUnknown, suspend.ErrUnknown) holds).
var (
	ErrTooMany  = suspend.Phrase(suspend.ErrCapped, "too many pending requests for this caller (limits.maxPending); answer or let some expire first")
	ErrExpired  = suspend.Phrase(suspend.ErrExpired, "the pending request expired before it was answered (limits.pendingTimeout); call the tool again")
	ErrUnknown  = suspend.Phrase(suspend.ErrUnknown, "no pending request has this id; it was already answered, or never existed")
	ErrMismatch = suspend.Phrase(suspend.ErrMismatch, "the answer must come with the same tool name and arguments as the call that returned the pending request")
	// ErrElsewhere: with a shared store (cluster.redis) the request is
	// open, but another replica holds the live connection that asked it
	// (or held it and is gone).
	// Store.Answer carries such an answer to that replica; this text is
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

// Resumer continues a suspended call with its answer: e is the open
// request the answer is for (checked to belong to call), call.Answer the
// answer. It returns what the call does next (its result, or the next
// PENDING).
type Resumer interface {
	Resume(ctx context.Context, e *Entry, call tool.Call) tool.Result
}

// Entry is one open request.
type Entry struct {
	// ID is what the caller echoes in Answer.id.
	ID string
	// Kind is the PendingRequest.kind ("elicitation", "sampling", "input").
	Kind string
	// ExpiresAt is when the request stops being answerable.
	ExpiresAt time.Time
	// Resume is the opener's own state for continuing a live request; nil
	// for a portable one.
	Resume Resumer
	// State is a portable request's state, as OpenPortable was given it.
	State []byte
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

// Binding is the suspended-call binding of a call (suspend.Bind): its
// owner, tool and the digest of its canonical arguments, so key order and
// whitespace do not matter, and an approval and an elicitation of one call
// agree.
func Binding(call tool.Call) (suspend.Binding, error) {
	return suspend.Bind(call.Owner.Principal, call.Owner.Session, call.Name, call.Arguments)
}

// envelope is what a request keeps in the store entry's Data: Live marks
// a request only its opener can resume (Owner names the opener's replica,
// when there are several); State is a portable request's state.
type envelope struct {
	Live  bool            `json:"live,omitempty"`
	Owner string          `json:"owner,omitempty"`
	State json.RawMessage `json:"state,omitempty"`
}

// envelopeOf reads an entry's Data. Data that is not an envelope was
// written by a replica of an earlier version: the opener's replica id, of
// a request only it can resume.
func envelopeOf(data []byte) envelope {
	var env envelope
	if len(data) > 0 && data[0] == '{' && json.Unmarshal(data, &env) == nil {
		return env
	}
	return envelope{Live: true, Owner: string(data)}
}

// Open registers a live request for the call, resumed by r on this
// replica only, and starts its deadline. onExpire, when not nil, runs once
// if the deadline passes unanswered (the waiter is released first).
func (s *Store) Open(call tool.Call, kind string, r Resumer, onExpire func()) (*Entry, error) {
	env := envelope{Live: true}
	if s.remote != nil {
		env.Owner = s.remote.Replica() // where an answer arriving elsewhere is forwarded
	}
	e, err := s.create(context.Background(), call, kind, env, false)
	if err != nil {
		return nil, err
	}
	e.Resume = r
	// The store decides expiry; this timer only forgets this process's
	// side and tells the opener, once the deadline has passed.
	s.mu.Lock()
	s.open[e.ID] = e
	e.timer = time.AfterFunc(time.Until(e.ExpiresAt), func() {
		if got, err := s.s.Get(context.Background(), e.ID); err == nil && got.State == suspend.Expired && s.forget(e) && onExpire != nil {
			onExpire()
		}
	})
	s.mu.Unlock()
	return e, nil
}

// OpenPortable registers a request whose whole state is state, kept in
// the store, so whichever replica the answer reaches resumes it (the
// source's Restore makes its Resumer from State). Nothing of it stays in
// this process: no timer, no goroutine. With reuse, the same call asking
// again while its request is open gets that request back (Entry.ID is the
// same), not a second one.
func (s *Store) OpenPortable(ctx context.Context, call tool.Call, kind string, state []byte, reuse bool) (*Entry, error) {
	return s.create(ctx, call, kind, envelope{State: state}, reuse)
}

func (s *Store) create(ctx context.Context, call tool.Call, kind string, env envelope, reuse bool) (*Entry, error) {
	b, err := Binding(call)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(env)
	if err != nil {
		return nil, fmt.Errorf("pending: the request's state is not JSON: %w", err)
	}
	l := s.Limits()
	se, err := s.s.Create(ctx, suspend.Request{Kind: suspend.Kind(kind), Binding: b, TTL: l.Timeout, MaxPerPrincipal: l.MaxPerPrincipal,
		Data: data, Reuse: reuse})
	if errors.Is(err, suspend.ErrCapped) {
		return nil, fmt.Errorf("%w (%w)", ErrTooMany, err)
	}
	if err != nil {
		return nil, err
	}
	return &Entry{ID: se.ID, Kind: kind, ExpiresAt: se.ExpiresAt, State: env.State, owner: call.Owner, bind: b, store: s}, nil
}

// Peek finds the entry an answer is for, checking that the call resuming
// it is the one that suspended: same owner (anyone else is told the id is
// unknown, so ids cannot be probed), same tool, same arguments. A live
// request another replica holds is ErrElsewhere (Answer forwards it).
func (s *Store) Peek(call tool.Call, id string) (*Entry, error) {
	return s.peek(context.Background(), call, id)
}

func (s *Store) peek(ctx context.Context, call tool.Call, id string) (*Entry, error) {
	got, err := s.s.Get(ctx, id)
	if errors.Is(err, suspend.ErrUnknown) {
		return nil, ErrUnknown
	}
	if err != nil {
		return nil, err // the store's own error (an outage says to retry)
	}
	if got.Principal != call.Owner.Principal || got.Session != call.Owner.Session || !answerable(got.Kind) {
		return nil, ErrUnknown
	}
	if got.State == suspend.Expired {
		return nil, ErrExpired
	}
	if got.State != suspend.Pending {
		return nil, ErrUnknown
	}
	if b, err := Binding(call); err != nil || b != got.Binding {
		return nil, ErrMismatch
	}
	s.mu.Lock()
	e, ok := s.open[id]
	s.mu.Unlock()
	if ok {
		return e, nil
	}
	env := envelopeOf(got.Data)
	if env.Live {
		return nil, &elsewhere{owner: env.Owner}
	}
	return &Entry{ID: id, Kind: string(got.Kind), ExpiresAt: got.ExpiresAt, State: env.State, owner: call.Owner, bind: got.Binding, store: s}, nil
}

// answerable reports whether a caller's answer resumes an entry of kind
// k: an approval is decided by an approver, and a suspended script is
// resumed by its own tool, never answered here.
func answerable(k suspend.Kind) bool { return k != suspend.KindApproval && k != suspend.KindRun }

// Owns reports whether the store holds id as an open request bound to
// exactly call: an answer to it resumes a call that already passed every
// check before it suspended.
func (s *Store) Owns(call tool.Call, id string) bool {
	_, err := s.Peek(call, id)
	return err == nil
}

// Answering is how a source resumes the answers its calls receive.
type Answering struct {
	// Label starts each error text (the tool's name); Meta is the
	// metadata of a failure.
	Label string
	Meta  map[string]any
	// Restore makes the Resumer of a portable request from its Entry
	// (State); nil for a source that opens none.
	Restore func(e *Entry) (Resumer, error)
}

// Answer resumes the call that call.Answer answers and returns what it
// does next: the request is found and checked (Peek), a live request held
// by another replica is forwarded there (Forward), a portable one is
// restored here; a refusal is an is_error result saying why.
func (s *Store) Answer(ctx context.Context, call tool.Call, a Answering) tool.Result {
	e, err := s.peek(ctx, call, call.Answer.ID)
	if errors.Is(err, ErrElsewhere) {
		return s.Forward(ctx, call, err, a.Label, a.Meta)
	}
	if err != nil {
		return tool.Failure(a.Label+": "+err.Error(), a.Meta)
	}
	r := e.Resume
	if r == nil && a.Restore != nil {
		if r, err = a.Restore(e); err != nil {
			return tool.Failure(a.Label+": the pending request's state cannot be resumed: "+err.Error(), a.Meta)
		}
	}
	if r == nil {
		return tool.Failure(a.Label+": "+ErrUnknown.Error(), a.Meta)
	}
	return r.Resume(ctx, e, call)
}

// Deliver hands the answer to the waiter and closes the entry. It fails
// with ErrExpired when the deadline (or a withdrawal) won the race, and
// with ErrUnknown when another answer did.
func (e *Entry) Deliver(a tool.Answer) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, err := e.store.s.Resolve(context.Background(), e.ID, suspend.Resolution{To: suspend.Answered, By: e.owner.Principal, Require: &e.bind})
	switch {
	case errors.Is(err, suspend.ErrAlreadyAnswered):
		return ErrUnknown
	case err != nil && !errors.Is(err, suspend.ErrExpired) && !errors.Is(err, suspend.ErrUnknown):
		return err // the store's own error (an outage says to retry)
	case err != nil:
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
		e.Withdraw()
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
// reports whether the entry was still open.
func (e *Entry) Withdraw() bool {
	ok, _ := e.store.s.Withdraw(context.Background(), e.ID) // the in-memory store does not fail
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

// Len is how many live requests this process holds open (for tests and
// metrics); portable ones are only in the store.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.open)
}
