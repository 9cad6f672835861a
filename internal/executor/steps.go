package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// The parts of a call that need the tool's prepared state, each used by
// one step of the core's pipeline: the arguments (validate), the slots
// and the timeout (concurrency and timeout), the run itself (run).

// Arguments are the arguments the tool gets ({} when the caller sent
// none), or, when they are not one JSON object or do not match the tool's
// input schema (limits.validateArguments), the result that ends the call
// naming each failing field.
func (p *Prepared) Arguments(args json.RawMessage) (json.RawMessage, tool.Result, bool) {
	if len(args) == 0 {
		args = emptyObject
	}
	if !isObject(args) {
		return nil, tool.FailureWith(tool.OutcomeInvalidArguments, fmt.Sprintf("invalid arguments for %s: the arguments must be a JSON object, e.g. {}", p.entry.Tool.Name)), false
	}
	if p.validate {
		if msg := p.check(args); msg != "" {
			return nil, tool.FailureWith(tool.OutcomeInvalidArguments, msg), false
		}
	}
	return args, tool.Result{}, true
}

// Slot is what a call holds while it runs under its limits: its
// concurrency slots (the server-wide, per-tool and per-principal caps) and
// its timeout (limits.timeout). Acquire takes it; Release frees it.
type Slot struct {
	p    *Prepared
	ctx  context.Context // the call's context: ours, when limits.timeout ends it first
	cc   *callContext    // nil when the caller's own deadline comes first
	psem chan struct{}
	held uint8 // which of global, psem, sem are held
}

const (
	heldGlobal uint8 = 1 << iota
	heldPrincipal
	heldTool
)

// Acquire waits for the call's slots under its timeout: the timeout
// bounds the wait too, so a call that cannot start within its time ends
// with a result (naming the limit it waited for) instead of hanging for as
// long as its caller is willing to. principal is the caller's name, for
// the per-principal cap. A Slot it returns must be released.
func (p *Prepared) Acquire(ctx context.Context, principal string) (Slot, tool.Result, bool) {
	s := Slot{p: p, ctx: ctx}
	// A caller whose own deadline comes first needs no timer of ours:
	// it saves a context and a timer per call for agents that set
	// deadlines.
	if dl, ok := ctx.Deadline(); p.timeout > 0 && (!ok || time.Until(dl) > p.timeout) {
		s.cc = newCallContext(ctx, p.timeout)
		s.ctx = s.cc
	}
	name := p.entry.Tool.Name
	if p.global != nil {
		if !acquire(s.ctx, p.global) {
			return s.refuse(limitResult(s.ctx, name, "the server-wide concurrency limit (limits.maxConcurrency)"))
		}
		s.held |= heldGlobal
	}
	if p.psem != nil {
		s.psem = p.psem.of(principal)
		if !acquire(s.ctx, s.psem) {
			return s.refuse(limitResult(s.ctx, name, fmt.Sprintf("its concurrency limit of %d per caller (limits.tools.%s.maxConcurrencyPerPrincipal)", cap(s.psem), name)))
		}
		s.held |= heldPrincipal
	}
	if p.sem != nil {
		if !acquire(s.ctx, p.sem) {
			return s.refuse(limitResult(s.ctx, name, fmt.Sprintf("its concurrency limit of %d (limits.tools.%s.maxConcurrency)", cap(p.sem), name)))
		}
		s.held |= heldTool
	}
	return s, tool.Result{}, true
}

// refuse releases what was taken and ends the call with r.
func (s Slot) refuse(r tool.Result) (Slot, tool.Result, bool) {
	s.Release()
	return Slot{}, r, false
}

// Context is the context the call runs under: the caller's, bounded by
// limits.timeout.
func (s Slot) Context() context.Context { return s.ctx }

// Release frees the slots and ends the call's context.
func (s Slot) Release() {
	if s.held&heldTool != 0 {
		<-s.p.sem
	}
	if s.held&heldPrincipal != 0 {
		<-s.psem
	}
	if s.held&heldGlobal != 0 {
		<-s.p.global
	}
	if s.cc != nil {
		s.cc.release()
	}
}

// Settle is the result of a call that ran under the slot, given the
// caller's context ctx: a call whose context ended is a timeout or a
// cancellation, whatever the tool returned. When limits.timeout fired
// (not the caller's deadline), a tool that said nothing is told which
// limit it ran into; a tool that used tool.ContextResult says so itself
// (the context's cause names the limit).
func (s Slot) Settle(ctx context.Context, res tool.Result) tool.Result {
	err := s.ctx.Err()
	if err == nil || res.Outcome == tool.OutcomePending {
		return res
	}
	res.IsError = true
	switch {
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.Canceled):
		res.Outcome = tool.OutcomeCanceled
	case ctx.Err() != nil:
		res.Outcome = tool.OutcomeTimeout
	default:
		res.Outcome = tool.OutcomeTimeout
		if res.Output == "" {
			res.Output = s.p.entry.Tool.Name + ": " + s.cc.cause().Error()
		}
	}
	return res
}

// Run runs the tool and cuts its output to limits.maxOutputBytes. A panic
// unwinds to the caller (the core's observe step recovers it, logging the
// stack to the server's logger rather than slog.Default).
func (p *Prepared) Run(ctx context.Context, call tool.Call) tool.Result {
	if len(call.Arguments) == 0 {
		call.Arguments = emptyObject
	}
	return p.Cut(p.entry.Tool.Run(ctx, call))
}

// Cut cuts a result of this tool to limits.maxOutputBytes, its text and
// its rich parts alike.
func (p *Prepared) Cut(res tool.Result) tool.Result {
	if p.maxOutput > 0 && len(res.Output) > p.maxOutput {
		res = truncate(res, p.maxOutput)
	}
	if p.maxOutput > 0 && len(res.Content) > 0 && tool.ContentSize(res.Content) > p.maxOutput {
		res = truncateContent(res, p.maxOutput)
	}
	return res
}
