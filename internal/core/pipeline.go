package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/toolnexus/toolnexus/internal/executor"
	"github.com/toolnexus/toolnexus/internal/session"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// A call is one list of steps, composed once (New): Execute resolves the
// name (one map read) and hands the call to the first step; each step
// ends the call with a result of its own or hands it on. Nothing about a
// call is decided outside this list. docs/pipeline.md's table is this
// list, entry for entry (TestPipelineDocMatchesCode).
//
// The order is the point:
//
//   - observe first, so the span, the audit line and the metrics see
//     every outcome, refusals included, once per call;
//   - the view before anything is charged or named, so a tool the caller
//     may not see is exactly an unknown name;
//   - the rate limit before any work, once per call: a relayed round is
//     the same call, so the relay comes after it;
//   - validation and policy before the session, so a call refused for its
//     arguments or by a policy creates no workspace;
//   - the concurrency slots and the timeout around the run alone, so an
//     approval's wait (or the client's answer to a relayed request) holds
//     no slot.

// The steps, by the names docs/pipeline.md and Options.OnStep use.
const (
	StepObserve   = "observe"
	StepView      = "view"
	StepRateLimit = "rate limit"
	StepRelay     = "relay"
	StepValidate  = "validate"
	StepPolicy    = "policy"
	StepSession   = "session"
	StepLimits    = "limits"
	StepRun       = "run"
)

// flow is one call on its way through the steps: the call as its door
// sent it (data only: the principal is Call.Caller, nowhere else), and
// what the steps before found. It travels by value, so the chain
// allocates nothing.
type flow struct {
	Call
	// tool is the resolved tool; nil for a name no tool has.
	tool *executor.Prepared
	// args are the arguments the tool gets (validated; {} for none).
	args json.RawMessage
}

type handler func(ctx context.Context, f flow) tool.Result

type step struct {
	name string
	wrap func(next handler) handler
}

// steps is the one list.
func (c *Core) steps() []step {
	return []step{
		{StepObserve, c.observe},
		{StepView, c.viewStep},
		{StepRateLimit, c.rateLimitStep},
		{StepRelay, relayStep},
		{StepValidate, validateStep},
		{StepPolicy, c.policyStep},
		{StepSession, c.sessionStep},
		{StepLimits, limitsStep},
		{StepRun, func(handler) handler { return c.run }},
	}
}

// Steps names the steps of a call, in order.
func Steps() []string {
	var c *Core // the list only: no step is made
	list := c.steps()
	names := make([]string, len(list))
	for i, s := range list {
		names[i] = s.name
	}
	return names
}

// compose makes the handler Execute calls. onStep (Options.OnStep, for
// tests) hears each step a call enters; nil costs nothing per call.
func (c *Core) compose(onStep func(ctx context.Context, step string, call Call)) handler {
	list := c.steps()
	var h handler
	for i := len(list) - 1; i >= 0; i-- {
		h = list[i].wrap(h)
		if onStep != nil {
			h = tapped(list[i].name, h, onStep)
		}
	}
	return h
}

func tapped(name string, h handler, onStep func(context.Context, string, Call)) handler {
	return func(ctx context.Context, f flow) tool.Result {
		onStep(ctx, name, f.Call)
		return h(ctx, f)
	}
}

// viewStep answers a call to a tool outside the caller's view — its
// token's allowlist, narrowed by what its door serves (server.mcp.tools
// on /mcp) and the named view it chose — exactly as a name no tool has,
// so probing names tells the caller nothing. The observe step still
// records it as denied under the tool's own labels, for the operator.
func (c *Core) viewStep(next handler) handler {
	return func(ctx context.Context, f flow) tool.Result {
		if f.tool == nil || !c.viewOf(f.Call).Allows(f.Name, f.tool.Source()) {
			return registry.UnknownTool(f.Name)
		}
		return next(ctx, f)
	}
}

// rateLimitStep refuses a call over limits.principals or
// limits.tools.NAME with a throttle (Result.Throttled) the front-end maps
// to its wire, and holds the principal's concurrent slot for the call.
func (c *Core) rateLimitStep(next handler) handler {
	return func(ctx context.Context, f flow) tool.Result {
		l := c.limiter.Load()
		if l == nil {
			return next(ctx, f)
		}
		ticket, refused := l.Admit(policyPrincipal(f.Caller), f.Name, time.Now())
		if refused != nil {
			c.pol.metrics.RateLimited.WithLabelValues(f.tool.Source()).Inc()
			r := tool.FailureWith(tool.OutcomeDenied, fmt.Sprintf("rate limited by %s: retry after %s", refused.Limit, refused.RetryAfter.Round(time.Millisecond)))
			r.Throttled = &tool.Throttle{Limit: refused.Limit, RetryAfter: refused.RetryAfter}
			return r
		}
		defer ticket.Release()
		return next(ctx, f)
	}
}

// maxRelayRounds bounds the rounds one call resumes through Call.Relay,
// so an upstream that keeps asking a client that cannot answer ends.
const maxRelayRounds = 16

// relayStep resumes a call that ended pending when its door can answer
// the request at once (Call.Relay: /mcp asks its client): each round runs
// the rest of the steps again with the answer. The rounds are one call,
// observed, admitted and charged once.
func relayStep(next handler) handler {
	return func(ctx context.Context, f flow) tool.Result {
		res := next(ctx, f)
		if f.Relay == nil {
			return res
		}
		for range maxRelayRounds {
			if res.Outcome != tool.OutcomePending {
				break
			}
			a := f.Relay(ctx, res)
			if a == nil {
				break
			}
			f.Answer = a
			res = next(ctx, f)
		}
		return res
	}
}

// validateStep ends a call whose arguments are not one JSON object, or do
// not match the tool's input schema (limits.validateArguments).
func validateStep(next handler) handler {
	return func(ctx context.Context, f flow) tool.Result {
		args, refused, ok := f.tool.Arguments(f.Arguments)
		if !ok {
			return refused
		}
		f.args = args
		return next(ctx, f)
	}
}

// policyStep asks the Cedar policies (policy.files) about the call: it
// runs, is refused, or waits for a human's approval (policy.go). Off, it
// costs one atomic load.
func (c *Core) policyStep(next handler) handler {
	return func(ctx context.Context, f flow) tool.Result {
		ps := c.policy.Load()
		if ps == nil {
			return next(ctx, f)
		}
		g := callGate{c: c, ps: ps, call: f.Call}
		refused, answer := g.Check(ctx, f.tool.Entry(), f.args, f.Answer)
		if refused != nil {
			return *refused
		}
		f.Answer = answer
		return next(ctx, f)
	}
}

// sessionStep runs the call in its session's workspace (creating it on
// first use), holding the session's lease until the call ends. A call
// without a session runs in the shared workspace — unless
// sessions.required is on: a front-end refuses that first, with its own
// status; this is the backstop for any path that does not.
func (c *Core) sessionStep(next handler) handler {
	return func(ctx context.Context, f flow) tool.Result {
		if f.Session == "" {
			if c.cfg.Load().Sessions.Required {
				return tool.FailureWith(tool.OutcomeInvalidArguments, ErrSessionRequired.Error()+": this server has sessions.required on")
			}
			return next(ctx, f)
		}
		if err := session.Validate(f.Session); err != nil {
			return tool.FailureWith(tool.OutcomeInvalidArguments, err.Error())
		}
		lease, err := c.sessions.Acquire(principalName(f.Call), f.Session)
		if err != nil {
			r := tool.FailureWith(tool.OutcomeDenied, "session: "+err.Error())
			if errors.Is(err, session.ErrTooMany) {
				r.Refusal = tool.RefusalSessionLimit
			}
			return r
		}
		defer lease.Release()
		return next(tool.WithWorkspace(ctx, lease), f)
	}
}

// limitsStep bounds the rest of the call in time (limits.timeout) and in
// concurrency (limits.maxConcurrency, limits.tools.NAME.maxConcurrency
// and maxConcurrencyPerPrincipal).
func limitsStep(next handler) handler {
	return func(ctx context.Context, f flow) tool.Result {
		slot, refused, ok := f.tool.Acquire(ctx, principalName(f.Call))
		if !ok {
			return refused
		}
		defer slot.Release()
		return slot.Settle(ctx, next(slot.Context(), f))
	}
}

// run runs the tool as the caller (tool.Call.Owner), cut to
// limits.maxOutputBytes. Code mode's own tools act as their caller and
// get the call itself (codemode.go).
func (c *Core) run(ctx context.Context, f flow) tool.Result {
	if c.codeMode && f.tool.Source() == codeModeSource {
		return f.tool.Cut(c.runCodeMode(ctx, f))
	}
	return f.tool.Run(ctx, tool.Call{Name: f.Name, Arguments: f.args, Answer: f.Answer, Owner: tool.Owner{Principal: principalName(f.Call), Session: f.Session}})
}
