package mcp

import (
	"context"

	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// CallerPath runs, for the external benchmarks, what a call to an "oauth"
// server does that the same call with a static header does not: the
// caller's token (ForCall), its session from the pool with the token set,
// and the release. It reports whether the caller had a session.
func CallerPath(src sources.Source, ctx context.Context, call tool.Call) bool {
	s := src.(*Source)
	tok, stop := s.callerToken(ctx, call)
	if stop != nil {
		return false
	}
	c, _ := s.callerSession(ctx, s.callerOf(ctx, call), tok)
	if c == nil {
		return false
	}
	s.callers.release(c)
	return true
}
