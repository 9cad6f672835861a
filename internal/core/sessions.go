package core

import (
	"context"
	"errors"
	"fmt"

	"github.com/toolnexus/toolnexus/internal/metrics"
	"github.com/toolnexus/toolnexus/internal/session"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// Session errors a front-end maps onto its own statuses.
var (
	// ErrSessionRequired: sessions.required is on and the call named none.
	ErrSessionRequired = errors.New("a session is required")
	// ErrSessionNotFound, ErrSessionBusy: see DeleteSession.
	ErrSessionNotFound = session.ErrNotFound
	ErrSessionBusy     = session.ErrBusy
)

// SessionInfo describes one session (ListSessions).
type SessionInfo = session.Info

// CheckSession is what a front-end asks before a call: the session id it
// read off its wire ("" when none) must be valid, and present when
// sessions.required is on. The error wraps session.ErrInvalidID or
// ErrSessionRequired and says what to send.
func (c *Core) CheckSession(id string) error {
	if id == "" {
		if c.cfg.Load().Sessions.Required {
			return fmt.Errorf("%w: this server has sessions.required on; name a session (%s)", ErrSessionRequired, session.IDRule)
		}
		return nil
	}
	return session.Validate(id)
}

// principalName is the session owner for a caller: its token name, "" when
// auth is off.
func principalName(call Call) string {
	if call.Caller == nil {
		return ""
	}
	return call.Caller.Name
}

// enterSession runs the call in its session's workspace: it returns the
// context carrying the workspace and the lease to release when the call is
// over, or a result refusing the call (a bad id, too many sessions).
func (c *Core) enterSession(ctx context.Context, call Call) (context.Context, *session.Lease, *tool.Result) {
	if err := session.Validate(call.Session); err != nil {
		r := c.refuse(call, tool.OutcomeInvalidArguments, err.Error())
		return ctx, nil, &r
	}
	lease, err := c.sessions.Acquire(principalName(call), call.Session)
	if err != nil {
		r := c.refuse(call, tool.OutcomeDenied, "session: "+err.Error())
		if errors.Is(err, session.ErrTooMany) {
			r.Refusal = tool.RefusalSessionLimit
			c.countRefusal(call, r.Refusal)
		}
		return ctx, nil, &r
	}
	return tool.WithWorkspace(ctx, lease), lease, nil
}

// refuse is the result of a call stopped before it reached its tool,
// counted under the tool's source like any other outcome.
func (c *Core) refuse(call Call, outcome tool.Outcome, msg string) tool.Result {
	source, toolLabel := metrics.UnknownLabel, metrics.UnknownLabel
	if e, ok := c.exec.Snapshot().Lookup(call.Name); ok {
		source, toolLabel = e.Tool.Source, e.Tool.Name
	}
	c.metrics.Calls.WithLabelValues(source, toolLabel, outcome.String(), call.Protocol).Inc()
	return tool.FailureWith(outcome, msg)
}

// countRefusal counts a refusal the core itself made, under the tool's
// source.
func (c *Core) countRefusal(call Call, r tool.Refusal) {
	if e, ok := c.exec.Snapshot().Lookup(call.Name); ok {
		c.metrics.RefusalCounters(e.Tool.Source).Inc(r)
	}
}

// Sessions lists sessions: the caller's own, or every principal's when all
// is set (admin). caller is the token name, "" without auth.
func (c *Core) Sessions(caller string, all bool) []SessionInfo {
	return c.sessions.List(caller, all)
}

// DeleteSession deletes a session and its workspace now (ErrSessionNotFound,
// ErrSessionBusy while a call in it runs).
func (c *Core) DeleteSession(principal, id string) error {
	if err := session.Validate(id); err != nil {
		return err
	}
	return c.sessions.Delete(principal, id)
}
