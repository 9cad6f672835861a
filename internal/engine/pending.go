package engine

import (
	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/suspend/pending"
)

// pendingFor applies limits.pendingTimeout and limits.maxPending to the
// shared store (requests opened from now on) and returns it.
func (e *Engine) pendingFor(cfg *config.Config) *pending.Store {
	e.pending.SetLimits(pending.Limits{Timeout: cfg.Pending.Timeout, MaxPerPrincipal: cfg.Pending.MaxPerPrincipal})
	return e.pending
}

// Pending is the store of pending requests every source shares (for the
// forwarding of answers between replicas).
func (e *Engine) Pending() *pending.Store { return e.pending }
