// Package suspend is the one store for suspended calls: a call that waits
// for a human's approval, or for the answer to a question, an MCP server's
// elicitation or sampling request, or an A2A agent's input request.
//
// Every such call is an Entry bound to one exact call (Binding: principal,
// session, tool and the canonical digest of its arguments, made by Bind and
// by nothing else), of one Kind, answerable once until it expires: an
// approval, a question, an upstream's elicitation, sampling or input
// request, a run_code script waiting on one of those. Whatever a kind needs
// to resume goes in the entry's Data, so a shared store lets any replica
// resume it; only a live connection's request stays with the process that
// holds the connection (package pending forwards its answer there). The Store interface is small and takes
// a context on every method so that a network-backed implementation (a
// shared control plane) fits it as well as the in-memory one (NewMemory);
// package suspendtest holds the contract every implementation passes.
//
// The life of an entry:
//
//	Create ─▶ Pending ─Resolve─▶ Approved ─Claim─▶ Claimed
//	                  ─Resolve─▶ Denied
//	                  ─Resolve─▶ Answered
//	                  ─(expiry)▶ Expired   (also an Approved entry not yet claimed)
//	                  ─Withdraw▶ (gone)
//
// Errors are the vocabulary below, wrapped where detail helps; compare
// with errors.Is.
package suspend

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Kind is what a suspended call waits for; it is PendingRequest.kind.
type Kind string

// The kinds.
const (
	KindApproval    Kind = "approval"    // a human decides whether the call runs
	KindQuestion    Kind = "question"    // the caller answers a question the call asked
	KindElicitation Kind = "elicitation" // an MCP server's elicitation/create
	KindSampling    Kind = "sampling"    // an MCP server's sampling/createMessage
	KindInput       Kind = "input"       // an A2A agent's input-required task
	// KindRoots: an MCP server on 2026-07-28 asks for the client's roots
	// (roots/list as an input request).
	KindRoots Kind = "roots"
	// KindAuthorization: the caller must connect its own account at an
	// OAuth upstream (pkg/sources/oauthclient) before the call can run.
	KindAuthorization Kind = "authorization"
	// KindRun is a run_code script suspended on one of its inner calls
	// (whose own entry is of one of the kinds above): its Data is the
	// record the script is replayed from when the caller resumes it.
	KindRun Kind = "run"
)

// kinds are every Kind, for KindOf.
var kinds = []Kind{KindApproval, KindQuestion, KindElicitation, KindSampling, KindInput, KindRoots, KindAuthorization, KindRun}

// State is where an entry stands.
type State string

// The states.
const (
	Pending  State = "pending"
	Approved State = "approved"
	Denied   State = "denied"
	Answered State = "answered"
	Expired  State = "expired"
	Claimed  State = "used" // approved, and its call has run ("used" on the wire since approvals began)
)

// Binding is the exact call an entry belongs to. Only a call with the same
// binding may answer or claim the entry.
type Binding struct {
	Principal string
	// Session is the call's session id ("" for a call without one).
	Session string
	Tool    string
	// Digest is the hex SHA-256 of the canonical arguments (Digest).
	Digest string
}

// Bind is the binding of a call: who made it (principal and session), to
// which tool, with which arguments (their canonical digest, so key order,
// whitespace and escapes do not matter; {"a":1,"b":2} and {"b":2,"a":1}
// are the same call). Every suspended kind binds its calls with Bind, so
// an approval, an answer, a requestState and a resumed script agree on
// what "the same call" is. It fails only for arguments that are not one
// JSON value or repeat a key.
func Bind(principal, session, tool string, args json.RawMessage) (Binding, error) {
	d, err := Digest(args)
	if err != nil {
		return Binding{}, err
	}
	return Binding{Principal: principal, Session: session, Tool: tool, Digest: d}, nil
}

// Request is a new entry.
type Request struct {
	Kind Kind
	Binding
	// TTL is how long the entry stays answerable (and, once approved,
	// claimable); it must be positive.
	TTL time.Duration
	// MaxPerPrincipal caps the pending entries of this Kind one principal
	// holds; MaxTotal caps them for all principals. Zero means no cap.
	// Caps travel with each request so a reload applies to the next one.
	MaxPerPrincipal, MaxTotal int
	// Reuse returns an open entry (pending, or approved and not claimed)
	// of the same Kind and Binding instead of adding one: an identical
	// retry does not use up the caps.
	Reuse bool
	// Data is the creator's own record (an approval's policy and
	// summary), kept and returned as is.
	Data []byte
}

// Resolution decides or answers a pending entry.
type Resolution struct {
	// To is Approved, Denied or Answered.
	To State
	// By is who resolved it (an approver, or the caller answering).
	By     string
	Reason string
	// Answer is the answer's payload (Answered).
	Answer []byte
	// Require, when set, must equal the entry's binding: a caller's
	// answer comes from the call that suspended, nobody else.
	Require *Binding
}

// Entry is one suspended call.
type Entry struct {
	ID   string
	Kind Kind
	Binding
	State      State
	Data       []byte
	Answer     []byte
	By         string
	Reason     string
	CreatedAt  time.Time
	ExpiresAt  time.Time
	ResolvedAt time.Time
	// Reused is set by Create when it returned an existing entry.
	Reused bool
}

// Filter selects entries for List; empty fields match all.
type Filter struct {
	Kind      Kind
	Principal string
	// Open lists only pending and approved-unclaimed entries.
	Open bool
}

// Store keeps suspended calls. Every method is safe for concurrent use;
// each state change is atomic (two resolutions of one entry: one wins,
// the other gets ErrAlreadyAnswered). A store that lives across the
// network fails every method with an error wrapping ErrUnavailable while
// it cannot be reached, never with ErrUnknown or ErrExpired: the entry is
// still there, and the caller is told to retry, not to start over.
type Store interface {
	// Create adds a pending entry (or returns the open one it reuses),
	// refusing with ErrCapped past a cap.
	Create(ctx context.Context, r Request) (Entry, error)
	// Get is one entry; ErrUnknown if the store does not hold it.
	Get(ctx context.Context, id string) (Entry, error)
	// Resolve moves a pending entry to r.To once. ErrUnknown for an id
	// not held or, with r.Require, bound to another principal (an id of
	// someone else's reads as unknown); ErrMismatch for the same
	// principal's other call; ErrExpired; ErrAlreadyAnswered.
	Resolve(ctx context.Context, id string, r Resolution) (Entry, error)
	// Claim uses an approved entry for its one run: b must equal its
	// binding (ErrUnknown for another principal, ErrMismatch otherwise).
	// ErrNotYet while pending, ErrDenied, ErrExpired, ErrClaimed after
	// the first claim.
	Claim(ctx context.Context, id string, b Binding) (Entry, error)
	// Wait blocks until the entry leaves Pending (resolved, expired or
	// withdrawn) and returns it, or returns ctx's error. ErrUnknown for
	// an id not held. An outage does not end a wait: it goes on until
	// ctx ends, or fails with ErrUnavailable once the entry's deadline
	// passed while the store could not be reached.
	Wait(ctx context.Context, id string) (Entry, error)
	// List is the entries matching f, newest first.
	List(ctx context.Context, f Filter) ([]Entry, error)
	// Withdraw removes an entry whose call went away; waiters wake with
	// ErrUnknown. It reports whether the entry was still pending.
	Withdraw(ctx context.Context, id string) (bool, error)
	// Pending is how many entries of kind k are pending, from the count
	// the caps keep: it reads no entry (a metric asks it at every
	// scrape).
	Pending(ctx context.Context, k Kind) (int, error)
	// Lookup is the open entry (pending, or approved and not claimed) of
	// kind k bound to exactly b, the newest when several were created;
	// ErrUnknown when there is none. It finds what a call suspended on
	// when the caller names the call, not the entry (a resumed run_code
	// names its inner call's id).
	Lookup(ctx context.Context, k Kind, b Binding) (Entry, error)
}

// The errors every Store returns. Their texts are written for a caller.
var (
	ErrUnknown         = errors.New("no such pending call (it was never made, belongs to someone else, or predates a restart)")
	ErrExpired         = errors.New("the pending call expired before it was answered; call the tool again")
	ErrCapped          = errors.New("too many calls are pending")
	ErrAlreadyAnswered = errors.New("the pending call has already been answered")
	ErrMismatch        = errors.New("the answer must come with the same tool, arguments and session as the call it answers")
	ErrNotYet          = errors.New("the approval is still pending; retry once an approver has decided")
	ErrDenied          = errors.New("the approval was denied")
	ErrClaimed         = errors.New("the approval was already used: it runs its call once")
	ErrInvalid         = errors.New("invalid request to the suspended-call store")
	ErrUnavailable     = errors.New("the suspended-call store is unavailable; retry later")
)

// Phrase is err said for one kind of caller: its own text, and
// errors.Is(Phrase(err, text), err) holds, so the layers over the store
// (approvals, pending requests, suspended scripts) speak the store's one
// vocabulary in their own words.
func Phrase(err error, text string) error { return &phrased{text: text, err: err} }

type phrased struct {
	text string
	err  error
}

func (p *phrased) Error() string { return p.text }
func (p *phrased) Unwrap() error { return p.err }

// CapError says which cap refused a Create; errors.Is(err, ErrCapped).
type CapError struct {
	Kind Kind
	// Principal is set when the per-principal cap refused.
	Principal string
	Max       int
}

func (e *CapError) Error() string {
	if e.Principal != "" {
		return fmt.Sprintf("%s: %s already has %d %s calls pending", ErrCapped, e.Principal, e.Max, e.Kind)
	}
	return fmt.Sprintf("%s: %d %s calls are pending for all callers", ErrCapped, e.Max, e.Kind)
}

// Unwrap makes errors.Is(err, ErrCapped) hold.
func (e *CapError) Unwrap() error { return ErrCapped }

// Open reports whether the entry can still be answered or claimed.
func (e Entry) Open() bool { return e.State == Pending || e.State == Approved }

var idEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// NewID is the one id scheme: a prefix naming the kind ("apr" for
// approvals, which operators type, else the kind), "_", and 128 random
// bits in base32, safe in a URL or a shell. It fails only if the
// system's randomness does.
func NewID(k Kind) (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("suspend: no randomness for an id: %w", err)
	}
	prefix := string(k)
	if k == KindApproval {
		prefix = "apr"
	}
	return prefix + "_" + idEncoding.EncodeToString(b[:]), nil
}

// KindOf is the kind an id names by its prefix, or "" when it is not an id
// of this scheme. It lets a gate tell an id it owns without a lookup.
func KindOf(id string) Kind {
	for _, k := range kinds {
		p := string(k)
		if k == KindApproval {
			p = "apr"
		}
		if len(id) > len(p) && id[:len(p)] == p && id[len(p)] == '_' {
			return k
		}
	}
	return ""
}

func validate(r Request) error {
	switch {
	case r.Kind == "":
		return fmt.Errorf("%w: no kind", ErrInvalid)
	case r.TTL <= 0:
		return fmt.Errorf("%w: the time to live must be positive", ErrInvalid)
	case r.Tool == "":
		return fmt.Errorf("%w: no tool in the binding", ErrInvalid)
	}
	return nil
}

func validResolution(r Resolution) error {
	switch r.To {
	case Approved, Denied, Answered:
		return nil
	}
	return fmt.Errorf("%w: a resolution goes to approved, denied or answered, not %q", ErrInvalid, r.To)
}
