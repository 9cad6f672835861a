package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// Call is one call on its way through the steps: the request, and what
// the steps before found (the tool's entry, the arguments to hand it). It
// travels by value, so the chain costs no allocation.
type Call struct {
	Request
	// Entry is the resolved tool.
	Entry *registry.Entry
	// Args are the arguments the tool gets ({} when the caller sent none).
	Args json.RawMessage

	st  *toolState
	tab *table
}

// Handler runs a call from one step on.
type Handler func(ctx context.Context, c Call) tool.Result

// Step is one stage of the pipeline: it ends the call with a result of its
// own, or hands it (changed or not) to next. Steps are composed once
// (Compose), as middleware is; the order is the caller's, in one place.
type Step func(next Handler) Handler

// Compose sets the steps every call goes through after the name is
// resolved, in order, before the tool runs. Call it once, before the first
// Execute (the core does, in New); without it a call runs
// DefaultSteps.
func (x *Executor) Compose(steps ...Step) {
	h := Handler(x.invoke)
	for i := len(steps) - 1; i >= 0; i-- {
		h = steps[i](h)
	}
	x.handler = h
}

// DefaultSteps are the executor's own steps in their order: what a caller
// without policies, rate limits or sessions needs.
func (x *Executor) DefaultSteps() []Step {
	return []Step{Visible, Validate, Gated, x.Limits}
}

// Visible ends a call to a tool outside the caller's allowlist (the core
// answers it as an unknown name, so names cannot be probed).
func Visible(next Handler) Handler {
	return func(ctx context.Context, c Call) tool.Result {
		if c.Allow != nil && !c.Allow(c.Name, c.st.source) {
			return tool.FailureWith(tool.OutcomeDenied, fmt.Sprintf("denied: your token does not allow the tool %q", c.Name))
		}
		return next(ctx, c)
	}
}

// Validate ends a call whose arguments are not one JSON object, or do not
// match the tool's input schema (when limits.validateArguments is on).
func Validate(next Handler) Handler {
	return func(ctx context.Context, c Call) tool.Result {
		if len(c.Args) == 0 {
			c.Args = emptyObject
		}
		if !isObject(c.Args) {
			return tool.FailureWith(tool.OutcomeInvalidArguments, fmt.Sprintf("invalid arguments for %s: the arguments must be a JSON object, e.g. {}", c.Name))
		}
		if c.st.validate {
			if msg := c.st.check(c.Args); msg != "" {
				return tool.FailureWith(tool.OutcomeInvalidArguments, msg)
			}
		}
		return next(ctx, c)
	}
}

// Gated runs the call's Gate (the core's policy and approval), if any.
func Gated(next Handler) Handler {
	return func(ctx context.Context, c Call) tool.Result {
		if c.Gate != nil {
			refused, answer := c.Gate.Check(ctx, c.Entry, c.Args, c.Answer)
			if refused != nil {
				return *refused
			}
			c.Answer = answer
		}
		return next(ctx, c)
	}
}

// Limits bounds the call in time (limits.timeout) and in concurrency (the
// server-wide, per-tool and per-principal caps). The timeout bounds the
// wait for a slot too: a call that cannot start within its time fails as
// a result instead of hanging for as long as the caller is willing to.
func (x *Executor) Limits(next Handler) Handler {
	return func(ctx context.Context, c Call) tool.Result {
		st := c.st
		callCtx := ctx
		// A caller whose own deadline comes first needs no timer of ours:
		// it saves a context and a timer per call for agents that set
		// deadlines.
		if dl, ok := ctx.Deadline(); st.timeout > 0 && (!ok || time.Until(dl) > st.timeout) {
			cc := newCallContext(ctx, st.timeout)
			defer cc.release()
			callCtx = cc
		}
		if c.tab.global != nil {
			if !acquire(callCtx, c.tab.global) {
				return limitResult(callCtx, c.Name, "the server-wide concurrency limit (limits.maxConcurrency)")
			}
			defer func() { <-c.tab.global }()
		}
		if st.psem != nil {
			sem := st.psem.of(c.Principal)
			if !acquire(callCtx, sem) {
				return limitResult(callCtx, c.Name, fmt.Sprintf("its concurrency limit of %d per caller (limits.tools.%s.maxConcurrencyPerPrincipal)", cap(sem), c.Name))
			}
			defer func() { <-sem }()
		}
		if st.sem != nil {
			if !acquire(callCtx, st.sem) {
				return limitResult(callCtx, c.Name, fmt.Sprintf("its concurrency limit of %d (limits.tools.%s.maxConcurrency)", cap(st.sem), c.Name))
			}
			defer func() { <-st.sem }()
		}
		res := next(callCtx, c)
		if err := callCtx.Err(); err != nil && res.Outcome != tool.OutcomePending {
			res.IsError = true
			switch {
			case ctx.Err() != nil && errors.Is(ctx.Err(), context.Canceled):
				res.Outcome = tool.OutcomeCanceled
			case ctx.Err() != nil:
				res.Outcome = tool.OutcomeTimeout
			default:
				// Our limit fired, not the caller's deadline: say which.
				res.Outcome = tool.OutcomeTimeout
				if res.Output == "" || res.Output == c.Name+": deadline exceeded" {
					res.Output = fmt.Sprintf("%s: timed out after %dms (limits.timeout)", c.Name, st.timeout.Milliseconds())
				}
			}
		}
		return res
	}
}

// invoke runs the tool and cuts its output to limits.maxOutputBytes.
func (x *Executor) invoke(ctx context.Context, c Call) tool.Result {
	st := c.st
	if len(c.Args) == 0 {
		c.Args = emptyObject
	}
	// Run, not Execute: a panic unwinds to Execute's recover, which logs
	// the stack to this server's logger rather than slog.Default.
	res := st.entry.Tool.Run(ctx, tool.Call{Name: c.Name, Arguments: c.Args, Answer: c.Answer, Owner: c.Owner})
	if st.maxOutput > 0 && len(res.Output) > st.maxOutput {
		res = truncate(res, st.maxOutput)
	}
	if st.maxOutput > 0 && len(res.Content) > 0 && tool.ContentSize(res.Content) > st.maxOutput {
		res = truncateContent(res, st.maxOutput)
	}
	return res
}
