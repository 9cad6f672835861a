package core

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/toolnexus/toolnexus/internal/executor"
	"github.com/toolnexus/toolnexus/internal/policy"
	"github.com/toolnexus/toolnexus/internal/session"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// pipeline is the order of a call's steps, composed once (New). Before the
// first step, Execute observes the call (its span and audit line, whatever
// the outcome) and the executor resolves the name (an unknown name ends
// there) and counts the call under its source. The order is the point:
//
//   - the allowlist first, so a tool the caller may not see is unknown
//     before any limit is charged or named;
//   - the rate limit before any work, after the caller may call the tool;
//   - validation and policy before the session, so a call refused for its
//     arguments or by a policy creates no workspace;
//   - the concurrency slots and the timeout around the run alone, so an
//     approval's wait holds no slot.
func (c *Core) pipeline() []executor.Step {
	return []executor.Step{
		executor.Visible,  // resolve: hidden = unknown
		c.rateLimitStep,   // rate limit: principal, then tool; nothing charged on a refusal
		executor.Validate, // arguments
		executor.Gated,    // policy and approval
		c.sessionStep,     // session lease
		c.exec.Limits,     // concurrency and timeout
	} // then the tool runs
}

// rateLimitStep refuses a call over limits.principals or
// limits.tools.NAME with a throttle (Result.Throttled) the front-end maps
// to its wire, and holds the principal's concurrent slot for the call.
func (c *Core) rateLimitStep(next executor.Handler) executor.Handler {
	return func(ctx context.Context, call executor.Call) tool.Result {
		l := c.limiter.Load()
		if l == nil || call.Resumed {
			return next(ctx, call)
		}
		who := call.Principal
		if who == "" {
			who = policy.Anonymous
		}
		ticket, refused := l.Admit(ctx, who, call.Entry.Tool.Name, time.Now())
		if refused != nil {
			c.pol.metrics.RateLimited.WithLabelValues(call.Entry.Tool.Source).Inc()
			r := tool.FailureWith(tool.OutcomeDenied, fmt.Sprintf("rate limited by %s: retry after %s", refused.Limit, refused.RetryAfter.Round(time.Millisecond)))
			r.Throttled = &tool.Throttle{Limit: refused.Limit, RetryAfter: refused.RetryAfter}
			return r
		}
		defer ticket.Release()
		return next(ctx, call)
	}
}

// sessionStep runs the call in its session's workspace (creating it on
// first use), holding the session's lease until the call ends. A call
// without a session runs in the shared workspace.
func (c *Core) sessionStep(next executor.Handler) executor.Handler {
	return func(ctx context.Context, call executor.Call) tool.Result {
		if call.Owner.Session == "" {
			return next(ctx, call)
		}
		if err := session.Validate(call.Owner.Session); err != nil {
			return tool.FailureWith(tool.OutcomeInvalidArguments, err.Error())
		}
		lease, err := c.sessions.Acquire(call.Owner.Principal, call.Owner.Session)
		if err != nil {
			r := tool.FailureWith(tool.OutcomeDenied, "session: "+err.Error())
			if errors.Is(err, session.ErrTooMany) {
				r.Refusal = tool.RefusalSessionLimit
			}
			return r
		}
		defer lease.Release()
		return next(tool.WithWorkspace(ctx, lease), call)
	}
}
