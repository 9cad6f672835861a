package mcpgateway

import (
	"bytes"
	"context"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Stateful /mcp keeps the events of each session's streams so that a
// 2025-11-25 client whose POST's event stream is cut can resume it: the
// SDK writes a priming event (an id, no data) first on the stream, and a
// GET with Last-Event-ID replays what followed (SEP-1699). The SDK keys
// the events by session and stream, and serves a GET only to the
// session's own caller (its id and, with auth, its token), so a
// Last-Event-ID of someone else's stream finds nothing. The events live
// in this replica's memory, as the session does: a stateful session is
// served by the replica that holds it (docs/cluster.md). Stateless /mcp
// (sessions.shared) and 2026-07-28 keep no events: there is no session to
// resume into, and SEP-2575 drops resumable streams.

// DefaultEventStoreBytes bounds the events kept for resumption, over all
// sessions: enough for a few answers of the size resources/read passes on
// whole, small beside the process's memory. The oldest events of every
// stream go first; resuming from a purged event is refused.
const DefaultEventStoreBytes = 4 << 20

// primeRetry is the retry field added to the priming event: how long a
// 2025-11-25 client waits before resuming a cut stream. A second keeps a
// resumed call prompt without a client hammering a replica that is
// restarting.
const primeRetry = "retry: 1000\n"

// resumeStore is the SDK's event store with each stored answer spliced
// as its POST's writer splices it (wire.go): the SDK stores a message
// before writing it, so its parts are still findable by their markers,
// and a replay hands the client the MCP server's bytes, never a marker.
type resumeStore struct {
	mcp.EventStore
	wire *wireSlots
}

func newResumeStore(wire *wireSlots, maxBytes int) resumeStore {
	m := mcp.NewMemoryEventStore(nil)
	if maxBytes <= 0 {
		maxBytes = DefaultEventStoreBytes
	}
	m.SetMaxBytes(maxBytes)
	return resumeStore{EventStore: m, wire: wire}
}

// Append stores data with each marker replaced by its part.
func (s resumeStore) Append(ctx context.Context, sessionID, streamID string, data []byte) error {
	if bytes.Contains(data, s.wire.find) {
		var b bytes.Buffer
		b.Grow(len(data))
		_ = splice(data, s.wire.find, s.wire.part, b.Write) // a bytes.Buffer does not fail
		data = b.Bytes()
	}
	return s.EventStore.Append(ctx, sessionID, streamID, data)
}

// withRetry is p with primeRetry added if p is the SDK's priming event
// ("event: prime", an id, empty data), which the SDK writes first on a
// POST's stream without the retry field SEP-1699 asks for; false leaves p
// as it is.
func withRetry(p []byte) ([]byte, bool) {
	const head, tail = "event: prime\nid: ", "\ndata: \n\n"
	if !bytes.HasPrefix(p, []byte(head)) || !bytes.HasSuffix(p, []byte(tail)) || len(p) < len(head)+len(tail) {
		return nil, false
	}
	id := p[len(head) : len(p)-len(tail)]
	if len(id) == 0 || bytes.IndexByte(id, '\n') >= 0 {
		return nil, false
	}
	out := make([]byte, 0, len(p)+len(primeRetry))
	out = append(append(append(out, p[:len(p)-len(tail)+1]...), primeRetry...), tail[1:]...)
	return out, true
}

// resumableVersion is the protocol whose POST streams the SDK primes.
const resumableVersion = "2025-11-25"

// noteResumable is receiving middleware that keeps the id of each stateful
// session initialized at resumableVersion, until the session ends.
func (g *Gateway) noteResumable(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != "initialize" || err != nil || g.stateless {
			return res, err
		}
		ss, ok := req.GetSession().(*mcp.ServerSession)
		if ir, isInit := res.(*mcp.InitializeResult); ok && isInit && ir.ProtocolVersion == resumableVersion && ss.ID() != "" {
			id := ss.ID()
			g.resumable.Store(id, struct{}{})
			g.forgetWhenDone(ss, func() { g.resumable.Delete(id) })
		}
		return res, err
	}
}

// sessionVersion names, on a POST of a session initialized at
// resumableVersion whose MCP-Protocol-Version header names an older
// version, the session's own: the SDK frames a POST's stream (the priming
// event) by the header, and the header SHOULD be the negotiated version
// anyway. The conformance suite's server-sse-polling sends 2025-03-26 on
// its 2025-11-25 session. r's headers are the gateway's copy (wire.go).
func (g *Gateway) sessionVersion(r *http.Request) {
	v := r.Header.Get("Mcp-Protocol-Version")
	if v == "" || v >= resumableVersion {
		return
	}
	if _, ok := g.resumable.Load(r.Header.Get("Mcp-Session-Id")); ok {
		r.Header.Set("Mcp-Protocol-Version", resumableVersion)
	}
}
