package config

import (
	"encoding/json"
	"time"

	"github.com/toolnexus/toolnexus/pkg/sources/field"
)

// Pending bounds the requests suspended calls wait on (an MCP server's
// elicitation or sampling request held open until the caller answers):
// limits.pendingTimeout and limits.maxPending.
type Pending struct {
	// Timeout is how long a request stays answerable; then the server gets
	// a cancel or decline and a late answer is refused as expired.
	Timeout time.Duration
	// MaxPerPrincipal caps the requests one principal holds open at once.
	MaxPerPrincipal int
}

// The defaults of limits.pendingTimeout and limits.maxPending.
const (
	DefaultPendingTimeout = 600000 * time.Millisecond
	DefaultMaxPending     = 100
)

// splitPending takes limits.pendingTimeout and limits.maxPending out of the
// limits section and returns the rest for parseLimits.
func splitPending(raw json.RawMessage) (Pending, json.RawMessage, error) {
	p := Pending{Timeout: DefaultPendingTimeout, MaxPerPrincipal: DefaultMaxPending}
	var fields map[string]json.RawMessage
	if raw == nil || json.Unmarshal(raw, &fields) != nil {
		return p, raw, nil // parseLimits names what is wrong with it
	}
	t, okT := fields["pendingTimeout"]
	m, okM := fields["maxPending"]
	if !okT && !okM {
		return p, raw, nil
	}
	if okT && !field.IsNull(t) {
		ms, ok := field.PositiveMillis(t)
		if !ok {
			return p, nil, keyErr("limits.pendingTimeout", "must be a positive number of milliseconds, e.g. 600000")
		}
		p.Timeout = time.Duration(ms) * time.Millisecond
	}
	if okM && !field.IsNull(m) {
		var n int
		if err := json.Unmarshal(m, &n); err != nil || n < 1 {
			return p, nil, keyErr("limits.maxPending", "must be a whole number of at least 1, e.g. 100")
		}
		p.MaxPerPrincipal = n
	}
	delete(fields, "pendingTimeout")
	delete(fields, "maxPending")
	rest, err := json.Marshal(fields)
	return p, rest, err
}
