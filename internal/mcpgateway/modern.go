package mcpgateway

import (
	"context"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The 2026-07-28 protocol has no sessions and no initialize: each request
// carries its protocol version, client info and capabilities in _meta,
// and the version also in the MCP-Protocol-Version header (the SDK
// requires the two to agree). The SDK serves that protocol only on a
// stateless handler, so the gateway keeps two handlers over one SDK
// server and picks one per request by that header: a client on an older
// protocol keeps its session on the stateful handler, on the same
// listener. A request that puts the version in _meta but omits the header
// goes to the stateful handler, which answers it with the SDK's
// unsupported-protocol-version error listing the versions it can speak.
//
// The SDK does the rest of the protocol on that handler: server/discover,
// the Mcp-Method and Mcp-Name headers checked against the body (a
// mismatch is HTTP 400 with JSON-RPC error -32020), the new error codes.
// The gateway adds cache hints (cacheHints) and multi round-trip input
// (input.go). Without an Mcp-Session-Id, the toolnexus session of such a
// request is its Toolnexus-Session header, else none.

// modernVersion is the first protocol version without sessions.
const modernVersion = "2026-07-28"

// protocolVersionHeader is the MCP transport's protocol version header.
const protocolVersionHeader = "Mcp-Protocol-Version"

// isModern reports whether r is on the 2026-07-28 protocol or later.
func isModern(r *http.Request) bool {
	v := r.Header.Get(protocolVersionHeader)
	return v >= modernVersion
}

// listTTL is how long a client may keep a tools/list: the registry
// changes when a source connects, restarts or is reloaded, and a client
// that listens (subscriptions/listen) hears of it at once; the TTL bounds
// how stale a client that does not listen can be.
const listTTL = 30_000

// MetaRevision carries the registry revision a tools/list reflects: two
// lists with the same revision (and the same token) are the same list.
const MetaRevision = "toolnexus/revision"

// cacheHints sets ttlMs and cacheScope on server/discover and tools/list.
// With auth on, a list depends on the token's allowlist, so only the
// caller's own client may cache it ("private"); discover answers the same
// to everyone.
func (g *Gateway) cacheHints(_ context.Context, req mcp.Request, c *mcp.Cacheable) {
	c.TTLMs = listTTL
	c.CacheScope = "public"
	if perCaller(req) && g.core.Authenticator() != nil {
		c.CacheScope = "private"
	}
}

// listRevision stamps a tools/list result with the registry revision the
// SDK tool set was last synced to.
func (g *Gateway) listRevision(lr *mcp.ListToolsResult) *mcp.ListToolsResult {
	out := *lr
	out.Meta = mcp.Meta{}
	for k, v := range lr.Meta {
		out.Meta[k] = v
	}
	out.Meta[MetaRevision] = g.revision.Load()
	return &out
}
