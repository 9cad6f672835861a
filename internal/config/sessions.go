package config

import (
	"encoding/json"
	"time"
)

// Defaults of the sessions section.
const (
	DefaultSessionIdleTimeout = time.Hour
	DefaultSessionMax         = 1000
	DefaultSessionMaxBytes    = 1 << 30
)

// Sessions is the `sessions` section: a workspace per agent session, each
// created on first use and deleted after it has been idle for IdleTimeout.
type Sessions struct {
	// Required refuses calls that name no session (INVALID_ARGUMENT)
	// instead of running them in the shared workspace.
	Required bool
	// IdleTimeout is how long a session may go unused before its
	// workspace is deleted.
	IdleTimeout time.Duration
	// Max caps the sessions one principal may have at once (0 = no cap).
	Max int
	// MaxBytes is each session's disk quota (0 = no quota).
	MaxBytes int64
}

func defaultSessions() Sessions {
	return Sessions{IdleTimeout: DefaultSessionIdleTimeout, Max: DefaultSessionMax, MaxBytes: DefaultSessionMaxBytes}
}

func parseSessions(raw json.RawMessage) (Sessions, error) {
	s := defaultSessions()
	if raw == nil {
		return s, nil
	}
	var r struct {
		Required    *bool  `json:"required"`
		IdleTimeout *int64 `json:"idleTimeout"`
		Max         *int   `json:"max"`
		MaxBytes    *int64 `json:"maxBytes"`
	}
	if err := strictDecode("sessions", raw, &r); err != nil {
		return s, err
	}
	if r.Required != nil {
		s.Required = *r.Required
	}
	if r.IdleTimeout != nil {
		if *r.IdleTimeout < 1 {
			return s, keyErr("sessions.idleTimeout", "must be at least 1 millisecond (default 3600000, one hour)")
		}
		s.IdleTimeout = time.Duration(*r.IdleTimeout) * time.Millisecond
	}
	if r.Max != nil {
		if *r.Max < 0 {
			return s, keyErr("sessions.max", "must be >= 0 (0 = no cap on sessions per principal)")
		}
		s.Max = *r.Max
	}
	if r.MaxBytes != nil {
		if *r.MaxBytes < 0 {
			return s, keyErr("sessions.maxBytes", "must be >= 0 bytes (0 = no quota)")
		}
		s.MaxBytes = *r.MaxBytes
	}
	return s, nil
}
