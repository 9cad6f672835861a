// Package confine hands the sources of this module the server's sandbox
// runner behind the public sources.Sandbox, so that the public API names no
// internal type while bash and sandboxed MCP servers still reach the
// runner's policy and helper.
package confine

import (
	"errors"

	"github.com/toolnexus/toolnexus/internal/sandbox"
	"github.com/toolnexus/toolnexus/pkg/sources"
)

// ErrForeign refuses a sandbox that says it confines but is not the
// server's: a source must never run a command unconfined while its owner
// believes it is confined.
var ErrForeign = errors.New("sandbox: only the server's own sandbox can confine commands; leave Env.Sandbox nil to run them unconfined")

// Runner is the server's runner behind s: nil when s is nil or off (run
// unconfined), ErrForeign when s is on but is not the server's.
func Runner(s sources.Sandbox) (*sandbox.Runner, error) {
	if s == nil {
		return nil, nil
	}
	if r, ok := s.(*sandbox.Runner); ok {
		if !r.On() {
			return nil, nil
		}
		return r, nil
	}
	if s.On() {
		return nil, ErrForeign
	}
	return nil, nil
}
