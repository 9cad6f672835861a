// Package registry holds the tool set: a stack of layers, one per source
// instance, in a fixed precedence order where a later layer wins a name
// collision.
//
// Readers never lock. Every change builds a new immutable Snapshot off to the
// side and publishes it with one atomic store, so a lookup on the Execute
// path is an atomic load plus a map read, and a reader can never see a
// half-built tool set. Writers replace one whole layer at a time; replacing
// one MCP server's tools leaves every other layer untouched.
//
// The registry resolves names and runs nothing: every call goes through the
// server's one call path, which applies limits, argument validation,
// allowlists and metrics. It knows nothing about any particular source or
// about gRPC.
package registry
