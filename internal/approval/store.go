// Package approval is the layer of the suspended-call store (package
// suspend) for calls a policy sent to a human: each approval is bound to
// one exact call (principal, session, tool, canonical arguments), can be
// decided once by someone other than the caller, and resumes exactly one
// run of that call. It adds to the store what only approvals have: the
// decision with its self-approval rule, the list an approver reads, and
// the policy and summary an approver sees. Who may decide (policy.approvers)
// is the core's rule, not this package's.
package approval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/toolnexus/toolnexus/internal/suspend"
)

// Status is where an approval stands.
type Status = suspend.State

// The statuses.
const (
	Pending  = suspend.Pending
	Approved = suspend.Approved
	Denied   = suspend.Denied
	Expired  = suspend.Expired
	Used     = suspend.Claimed // approved, and its call has run
)

// Request is the call an approval is for.
type Request struct {
	// Binding is the exact call: principal, session, tool and the
	// digest of its canonical arguments (suspend.Digest).
	suspend.Binding
	// Policy is the @id of the policy that asked for the approval.
	Policy string
	// Summary is the arguments as a person reads them.
	Summary string
	// PolicyReason is that policy's @reason ("" when it has none), for
	// the approver to read beside the call.
	PolicyReason string
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
	// Reused is set when Create found the same call already waiting.
	Reused bool
}

// The ways an approval is refused, each with its own text for the caller;
// each that has one is the store's error of the same meaning
// (errors.Is(ErrUnknown, suspend.ErrUnknown) holds): one vocabulary.
var (
	ErrFull        = suspend.Phrase(suspend.ErrCapped, "too many approvals are pending (policy.maxPending per principal, policy.maxPendingTotal for all); ask an approver to decide some, then retry")
	ErrUnknown     = suspend.Phrase(suspend.ErrUnknown, "no such approval (it may predate a restart, which denies every pending approval)")
	ErrSelf        = errors.New("the principal that made a call cannot approve or deny it")
	ErrDecided     = suspend.Phrase(suspend.ErrAlreadyAnswered, "the approval has already been decided")
	ErrExpired     = suspend.Phrase(suspend.ErrExpired, "the approval expired before it was decided")
	ErrDeniedCall  = suspend.Phrase(suspend.ErrDenied, "the approval was denied")
	ErrNotYet      = suspend.Phrase(suspend.ErrNotYet, "the approval is still pending; retry once an approver has decided")
	ErrUsed        = suspend.Phrase(suspend.ErrClaimed, "the approval was already used: it runs its call once")
	ErrOtherCaller = suspend.Phrase(suspend.ErrMismatch, "the approval belongs to another principal")
	ErrOtherTool   = suspend.Phrase(suspend.ErrMismatch, "the approval is for another tool")
	ErrOtherArgs   = suspend.Phrase(suspend.ErrMismatch, "the approval is for other arguments: it covers exactly the arguments it was asked for")
	ErrOtherSess   = suspend.Phrase(suspend.ErrMismatch, "the approval is for another session: it covers the session it was asked in")
)

// Limits bound the approvals.
type Limits struct {
	// MaxPerPrincipal caps the pending approvals of one principal
	// (policy.maxPending); MaxTotal caps them for all (policy.maxPendingTotal).
	MaxPerPrincipal, MaxTotal int
	// Timeout is how long an approval stays decidable and, approved, usable.
	Timeout time.Duration
}

// Store is the approvals in a suspended-call store. Nothing here runs on
// the ordinary call path: only calls a policy wants approved reach it.
type Store struct {
	s      suspend.Store
	limits atomic.Pointer[Limits]
}

// New makes the approval layer over s with limits l.
func New(s suspend.Store, l Limits) *Store {
	a := &Store{s: s}
	a.SetLimits(l)
	return a
}

// SetLimits changes the caps and timeout for approvals made from now on.
func (a *Store) SetLimits(l Limits) { a.limits.Store(&l) }

// Owns reports whether id is an approval's id (by its prefix): a gate
// claims only the answers whose id it owns and passes the others on.
func Owns(id string) bool { return suspend.KindOf(id) == suspend.KindApproval }

// data is what an approval keeps beside its binding.
type data struct {
	Policy       string `json:"policy"`
	Summary      string `json:"summary"`
	PolicyReason string `json:"policy_reason,omitempty"`
}

// Create records a pending approval, or returns the one the same call
// (principal, session, tool, arguments) already waits on, pending or
// approved and unused: a retry does not add one.
func (a *Store) Create(ctx context.Context, r Request) (Entry, error) {
	l := a.limits.Load()
	d, err := json.Marshal(data{Policy: r.Policy, Summary: r.Summary, PolicyReason: r.PolicyReason})
	if err != nil {
		return Entry{}, err
	}
	e, err := a.s.Create(ctx, suspend.Request{Kind: suspend.KindApproval, Binding: r.Binding, TTL: l.Timeout,
		MaxPerPrincipal: l.MaxPerPrincipal, MaxTotal: l.MaxTotal, Reuse: true, Data: d})
	if err != nil {
		return Entry{}, translate(err)
	}
	return entryOf(e), nil
}

// Decide approves or denies a pending approval on behalf of decider.
func (a *Store) Decide(ctx context.Context, id, decider string, approve bool, reason string) (Entry, error) {
	e, err := a.get(ctx, id)
	if err != nil {
		return Entry{}, err
	}
	if decider == e.Principal {
		return e, ErrSelf
	}
	to := suspend.Denied
	if approve {
		to = suspend.Approved
	}
	got, err := a.s.Resolve(ctx, id, suspend.Resolution{To: to, By: decider, Reason: reason})
	if err != nil {
		return entryOf(got), translate(err)
	}
	return entryOf(got), nil
}

// Redeem uses an approved approval for the one call it is bound to. It
// succeeds once.
func (a *Store) Redeem(ctx context.Context, id string, call suspend.Binding) (Entry, error) {
	e, err := a.get(ctx, id)
	if err != nil {
		return Entry{}, err
	}
	// Who and what first: a stranger learns nothing about the state of
	// an approval that is not theirs.
	switch {
	case e.Principal != call.Principal:
		return Entry{}, ErrOtherCaller
	case e.Tool != call.Tool:
		return Entry{}, ErrOtherTool
	case e.Digest != call.Digest:
		return Entry{}, ErrOtherArgs
	case e.Session != call.Session:
		return Entry{}, ErrOtherSess
	}
	got, err := a.s.Claim(ctx, id, call)
	if errors.Is(err, suspend.ErrDenied) {
		return e, fmt.Errorf("%w by %s: %s", ErrDeniedCall, e.DecidedBy, orNone(e.Reason))
	}
	if err != nil {
		return entryOf(got), translate(err)
	}
	return entryOf(got), nil
}

// Wait blocks until the approval is decided or expires (nil error), or ctx
// ends (its error); ErrUnknown when the store no longer holds it.
func (a *Store) Wait(ctx context.Context, id string) (Entry, error) {
	e, err := a.s.Wait(ctx, id)
	if err != nil {
		return Entry{}, translate(err)
	}
	return entryOf(e), nil
}

// List is every approval held, newest first.
func (a *Store) List(ctx context.Context) ([]Entry, error) {
	es, err := a.s.List(ctx, suspend.Filter{Kind: suspend.KindApproval})
	if err != nil {
		return nil, err
	}
	out := make([]Entry, len(es))
	for i, e := range es {
		out[i] = entryOf(e)
	}
	return out, nil
}

// Pending is how many approvals wait for a decision, from the count the
// caps keep (no entry is read).
func (a *Store) Pending(ctx context.Context) (int, error) {
	return a.s.Pending(ctx, suspend.KindApproval)
}

// Get is one approval.
func (a *Store) Get(ctx context.Context, id string) (Entry, bool) {
	e, err := a.get(ctx, id)
	return e, err == nil
}

func (a *Store) get(ctx context.Context, id string) (Entry, error) {
	if !Owns(id) {
		return Entry{}, ErrUnknown
	}
	e, err := a.s.Get(ctx, id)
	if err != nil {
		return Entry{}, translate(err)
	}
	if e.Kind != suspend.KindApproval {
		return Entry{}, ErrUnknown
	}
	return entryOf(e), nil
}

func entryOf(e suspend.Entry) Entry {
	var d data
	_ = json.Unmarshal(e.Data, &d) // written by Create; an empty entry has none
	return Entry{ID: e.ID, Request: Request{Binding: e.Binding, Policy: d.Policy, Summary: d.Summary, PolicyReason: d.PolicyReason}, Status: e.State,
		CreatedAt: e.CreatedAt, ExpiresAt: e.ExpiresAt, DecidedBy: e.By, DecidedAt: e.ResolvedAt, Reason: e.Reason, Reused: e.Reused}
}

// translate turns the store's errors into the approval texts callers and
// approvers read.
func translate(err error) error {
	switch {
	case errors.Is(err, suspend.ErrCapped):
		return fmt.Errorf("%w (%v)", ErrFull, err)
	case errors.Is(err, suspend.ErrUnknown):
		return ErrUnknown
	case errors.Is(err, suspend.ErrExpired):
		return ErrExpired
	case errors.Is(err, suspend.ErrAlreadyAnswered):
		return ErrDecided
	case errors.Is(err, suspend.ErrNotYet):
		return ErrNotYet
	case errors.Is(err, suspend.ErrClaimed):
		return ErrUsed
	case errors.Is(err, suspend.ErrDenied):
		return ErrDeniedCall
	}
	return err
}

func orNone(s string) string {
	if s == "" {
		return "no reason given"
	}
	return s
}
