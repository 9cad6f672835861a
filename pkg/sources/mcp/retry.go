package mcp

import "time"

// StartBackoff is the first and the longest wait between attempts to start
// a server that failed to start (the engine retries it with the same
// restart settings that bring back a server that died).
func (r Restart) StartBackoff() (initial, max time.Duration) {
	r = r.withDefaults()
	return time.Duration(r.InitialBackoff) * time.Millisecond, time.Duration(r.MaxBackoff) * time.Millisecond
}
