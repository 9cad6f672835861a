package pending

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// With a shared store (cluster.redis) a request opened on one replica may
// be answered on another. The opener's state (a live stdio connection's
// waiting request, an A2A task's client) stays where it was opened, so
// the answer travels instead: Forward sends the answering call to the
// replica that opened the request, which resumes it exactly as if the
// answer had arrived there (ServeForwarded), and the result comes back to
// the caller on the replica it called. The opener is known from the
// shared entry, which records the replica that created it.

// Remote carries a forwarded answer to another replica and its result
// back (cluster.Client).
type Remote interface {
	// Replica is this replica's id.
	Replica() string
	// Forward sends req to replica owner and returns its reply; an error
	// wrapping ErrOwnerGone when owner no longer listens.
	Forward(ctx context.Context, owner string, req []byte) ([]byte, error)
}

// elsewhere is ErrElsewhere naming the replica that holds the request.
type elsewhere struct{ owner string }

func (e *elsewhere) Error() string        { return ErrElsewhere.Error() }
func (e *elsewhere) Is(target error) bool { return target == ErrElsewhere }

// SetRemote makes the store record this replica on every request it opens
// and forward answers to requests other replicas hold. Call it before the
// store serves.
func (s *Store) SetRemote(r Remote) { s.remote = r }

// forwardedCall is what travels: the answering call as the pipeline
// admitted it on the replica it reached.
type forwardedCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Owner     tool.Owner      `json:"owner"`
	Answer    tool.Answer     `json:"answer"`
	// Deadline is the caller's, so the owner stops when the caller does.
	Deadline time.Time `json:"deadline,omitzero"`
}

// Forward answers call, whose live request Peek said another replica holds
// (err, from Peek), on that replica, and returns the result. When the
// holder is gone the result is an is_error saying so at once; label
// starts each error text (the tool's name).
func (s *Store) Forward(ctx context.Context, call tool.Call, err error, label string, meta map[string]any) tool.Result {
	var at *elsewhere
	if s.remote == nil || !errors.As(err, &at) || at.owner == "" || call.Answer == nil {
		return tool.Failure(label+": "+err.Error(), meta)
	}
	fc := forwardedCall{Name: call.Name, Arguments: call.Arguments, Owner: call.Owner, Answer: *call.Answer}
	fc.Deadline, _ = ctx.Deadline()
	req, merr := json.Marshal(fc)
	if merr != nil { // the answer's data came from a decoded request: plain JSON values
		return tool.Failure(label+": the answer cannot be forwarded to the replica holding its request: "+merr.Error(), meta)
	}
	reply, ferr := s.remote.Forward(ctx, at.owner, req)
	if ferr != nil {
		if ctx.Err() != nil {
			return tool.ContextResult(ctx, label)
		}
		return tool.Failure(label+": "+forwardFailure(ferr), meta)
	}
	var r tool.Result
	if err := json.Unmarshal(reply, &r); err != nil {
		return tool.Failure(label+": the replica holding this pending request sent an unreadable result: "+err.Error(), meta)
	}
	return r
}

// ErrOwnerGone is what a Remote's error wraps when the replica holding
// the request no longer listens; the caller is told to call again.
var ErrOwnerGone = errors.New("owner gone")

func forwardFailure(err error) string {
	if errors.Is(err, ErrOwnerGone) {
		return "the replica holding this pending request is gone (stopped or killed), and the upstream request went with it; call the tool again"
	}
	return "the answer could not be forwarded to the replica holding its request (" + err.Error() + "); call the tool again"
}

// ServeForwarded resumes, on the replica holding its request, a call
// forwarded from another replica, and returns its result as the reply.
// The call is checked exactly as a local answer is (owner, tool,
// arguments).
func (s *Store) ServeForwarded(ctx context.Context, req []byte) []byte {
	var fc forwardedCall
	var r tool.Result
	if err := json.Unmarshal(req, &fc); err != nil {
		r = tool.Failure("the forwarded answer was unreadable: "+err.Error(), nil)
	} else {
		call := tool.Call{Name: fc.Name, Arguments: fc.Arguments, Owner: fc.Owner, Answer: &fc.Answer}
		if !fc.Deadline.IsZero() {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, fc.Deadline)
			defer cancel()
		}
		r = s.resumeForwarded(ctx, call)
	}
	b, err := json.Marshal(r)
	if err != nil { // a source's metadata that JSON cannot carry
		b, _ = json.Marshal(tool.Failure(fc.Name+": the result could not be sent back from the replica holding the request: "+err.Error(), nil))
	}
	return b
}

func (s *Store) resumeForwarded(ctx context.Context, call tool.Call) tool.Result {
	e, err := s.peek(ctx, call, call.Answer.ID)
	if errors.Is(err, ErrElsewhere) {
		err = ErrUnknown // forwarded once only: never on to a third replica
	}
	if err != nil {
		return tool.Failure(call.Name+": "+err.Error(), nil)
	}
	if e.Resume == nil { // a portable request is resumed where the answer arrived, never forwarded
		return tool.Failure(call.Name+": "+ErrUnknown.Error(), nil)
	}
	return e.Resume.Resume(ctx, e, call)
}
