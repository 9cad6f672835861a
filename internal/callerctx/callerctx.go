// Package callerctx carries the authenticated caller in a context. It
// imports nothing of toolnexus, so a source (which the config package
// imports) can read the caller without importing internal/auth (which
// imports config); internal/auth's With and From are the typed front.
package callerctx

import "context"

type key struct{}

// With returns ctx carrying caller.
func With(ctx context.Context, caller any) context.Context {
	return context.WithValue(ctx, key{}, caller)
}

// From returns the caller ctx carries, or nil.
func From(ctx context.Context) any { return ctx.Value(key{}) }

// BearerToken is the caller's verified identity-provider token, for a token
// exchange; "" when there is none (a static token, or auth off).
func BearerToken(ctx context.Context) string {
	if c, ok := From(ctx).(interface{ BearerToken() string }); ok {
		return c.BearerToken()
	}
	return ""
}

// Principal names the caller in ctx, "" when there is none: what per-caller
// state kept by a source (an MCP session authenticated as that caller) is
// keyed by.
func Principal(ctx context.Context) string {
	if c, ok := From(ctx).(interface{ String() string }); ok {
		return c.String()
	}
	return ""
}
