package core

import (
	"errors"
	"fmt"

	"github.com/toolnexus/toolnexus/internal/session"
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
