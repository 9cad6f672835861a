package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/internal/suspend/pending"
	"github.com/toolnexus/toolnexus/pkg/sources/field"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// A call to a server that may ask something mid-call (elicitation,
// sampling) runs as a flight: CallTool goes on in the background while the
// caller's Execute returns OUTCOME_PENDING with the server's request, and a
// later Execute carrying the answer picks the same flight up again.
//
// The goroutines: the SDK runs each server request on its own goroutine,
// which blocks in the handler until the answer (or the deadline) comes; the
// background CallTool is the SDK's synchronous call. Nothing else waits per
// pending call: the deadline is a timer in the pending store.
type flight struct {
	src    *Source
	name   string // the tool's name in results
	sess   *session
	call   tool.Call // name, arguments (a copy) and owner
	asks   chan ask  // capacity 1: a flight holds one server request at a time
	done   chan callOutcome
	cancel context.CancelFunc

	// asked is set while the flight holds a server request; guarded by
	// the session's flights lock.
	asked bool
}

// ask is one server request as the caller sees it.
type ask struct {
	entry   *pending.Entry
	pending tool.Pending
}

type callOutcome struct {
	res *sdk.CallToolResult
	err error
}

// flights is a session's calls in flight that a server request may belong to.
type flights struct {
	mu  sync.Mutex
	set map[*flight]struct{}
}

type flightKey struct{}

func (fs *flights) add(f *flight) {
	fs.mu.Lock()
	if fs.set == nil {
		fs.set = map[*flight]struct{}{}
	}
	fs.set[f] = struct{}{}
	fs.mu.Unlock()
}

func (fs *flights) remove(f *flight) {
	fs.mu.Lock()
	delete(fs.set, f)
	fs.mu.Unlock()
}

// claim finds the call a server request belongs to and marks it asked. The
// SDK's multi-round-trip path runs the handler under the call's own
// context, which names the flight. A request sent on the connection (how
// servers before 2026-07-28 ask) names no call: it is the call's only if
// exactly one call in flight holds no request yet; otherwise nil, and the
// request is declined rather than shown to a caller it may not belong to.
func (fs *flights) claim(ctx context.Context) *flight {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if f, ok := ctx.Value(flightKey{}).(*flight); ok {
		if _, live := fs.set[f]; live && !f.asked {
			f.asked = true
			return f
		}
		return nil
	}
	var only *flight
	for f := range fs.set {
		if f.asked {
			continue
		}
		if only != nil {
			return nil
		}
		only = f
	}
	if only != nil {
		only.asked = true
	}
	return only
}

func (fs *flights) release(f *flight) {
	fs.mu.Lock()
	f.asked = false
	fs.mu.Unlock()
}

// suspends reports whether calls to this server run as flights: the server
// was offered elicitation or sampling.
func (s *Source) suspends() bool { return s.cfg.elicitation() || s.cfg.sampling() }

// errSessionClosing is a call that reached a session close had begun on.
var errSessionClosing = errors.New("connection closed")

// callFlight runs a call that may suspend: a new call starts a flight; a
// call with an answer resumes the flight its pending request belongs to.
func (s *Source) callFlight(ctx context.Context, sess *session, params *sdk.CallToolParams, call tool.Call, name string) tool.Result {
	call.Arguments = append(json.RawMessage(nil), call.Arguments...)
	f := &flight{src: s, name: name, sess: sess, call: call, asks: make(chan ask, 1), done: make(chan callOutcome, 1)}
	// The call outlives this request when it suspends: it keeps the
	// request's values (the trace) but not its cancellation, which await
	// passes on for as long as someone waits for it.
	bg, cancel := context.WithCancel(context.WithValue(context.WithoutCancel(ctx), flightKey{}, f))
	f.cancel = cancel
	sess.flights.add(f)
	started := sess.goFlight(func() {
		res, err := sess.cs.CallTool(bg, params)
		sess.flights.remove(f)
		f.done <- callOutcome{res, err}
		cancel()
	})
	if !started {
		sess.flights.remove(f)
		cancel()
		return s.finish(ctx, sess, name, nil, errSessionClosing)
	}
	return s.await(ctx, f, name)
}

// await returns what the flight does next: its result, or its next request
// (the flight then waits in the background for the answer).
func (s *Source) await(ctx context.Context, f *flight, name string) tool.Result {
	select {
	case a := <-f.asks:
		p := a.pending
		p.ID, p.ExpiresAt = a.entry.ID, a.entry.ExpiresAt
		r := tool.Suspend(p)
		r.Metadata = s.meta
		return r
	case o := <-f.done:
		return s.finish(ctx, f.sess, name, o.res, o.err)
	case <-ctx.Done():
		f.cancel()
		r := tool.ContextResult(ctx, name)
		r.Metadata = s.meta
		return r
	}
}

// resume hands an answer to the request it names and returns what the
// call does next (pending.Store.Answer: a live request another replica
// holds is forwarded there, a round trip is restored wherever it is).
func (s *Source) resume(ctx context.Context, call tool.Call, name string) tool.Result {
	return s.pending.Answer(ctx, call, pending.Answering{Label: name, Meta: s.meta, Restore: s.restoreRoundTrip(name)})
}

// Resume takes the answer to the server request this flight holds
// (pending.Resumer) and waits for what the call does next. An answer the
// server would refuse (elicitation content that does not match
// requestedSchema) is refused here instead, with the request left open,
// so the caller can correct it.
func (f *flight) Resume(ctx context.Context, e *pending.Entry, call tool.Call) tool.Result {
	s := f.src
	if msg := checkAnswer(e, *call.Answer); msg != "" {
		return tool.Failure(f.name+": "+msg, s.meta)
	}
	if err := e.Deliver(*call.Answer); err != nil {
		return tool.Failure(f.name+": "+err.Error(), s.meta)
	}
	return s.await(ctx, f, f.name)
}

// serverAsk is what the elicitation and sampling handlers share: find the
// call, open its pending request, show it to the caller, wait for the
// answer. ok is false when the request cannot be put to anyone (no call
// claims it, too many open) or was not answered in time.
func (s *Source) serverAsk(ctx context.Context, sess *session, p tool.Pending, check any) (tool.Answer, bool) {
	f := sess.flights.claim(ctx)
	if f == nil {
		s.log.Warn("MCP server request declined: it belongs to no single call in flight", "kind", p.Kind)
		return tool.Answer{}, false
	}
	defer sess.flights.release(f)
	e, err := s.pending.Open(f.call, p.Kind, f, f.cancel)
	if err != nil {
		s.log.Info("MCP server request declined", "kind", p.Kind, "error", err)
		return tool.Answer{}, false
	}
	e.Check = check
	select {
	case f.asks <- ask{entry: e, pending: p}:
	default:
		// The caller gave up on the flight before reading its last
		// request; this one will never be shown.
		_ = e.Deliver(tool.Answer{})
		return tool.Answer{}, false
	}
	return e.Wait(ctx)
}

// parseAnswering reads a server's "elicitation" and "sampling" switches.
func parseAnswering(name string, fields map[string]json.RawMessage) (elicitation, sampling *bool, err error) {
	const hint = "must be true or false (false stops offering the server this client capability)"
	if elicitation, err = field.Object(fields).Bool(name, "elicitation", hint); err != nil {
		return nil, nil, err
	}
	sampling, err = field.Object(fields).Bool(name, "sampling", hint)
	return elicitation, sampling, err
}

func (c ServerConfig) elicitation() bool { return c.Elicitation == nil || *c.Elicitation }
func (c ServerConfig) sampling() bool    { return c.Sampling == nil || *c.Sampling }
