package mcpgateway

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
)

// With Options.Stateless (sessions.shared) the gateway serves /mcp in the
// SDK's stateless mode, so a load balancer may send each request of a
// client to any replica: no replica holds an MCP session in memory that
// another lacks. Each POST is answered on its own, its notifications
// (progress, and the log messages of a call that asks for them per
// request) on that POST's own event stream.
//
// What a session carried across requests, the toolnexus session, is kept
// by name instead: the response to initialize carries a fresh
// Mcp-Session-Id, which clients send back on every later request, and
// that id names the toolnexus session (its workspace on the shared
// volume) exactly as a Toolnexus-Session header would. The SDK itself
// neither sets nor reads the header in this mode.

// mcpSessionHeader is the MCP transport's session header.
const mcpSessionHeader = "Mcp-Session-Id"

// peekLimit bounds how much of a POST without a session id is read to
// see whether it is an initialize request.
const peekLimit = 64 << 10

// statelessSession names the toolnexus session of a stateless request: the
// client's Mcp-Session-Id, or for an initialize request a fresh id, sent
// back in the response for the client to keep. It returns the request to
// serve and false after answering a bad id itself.
func (g *Gateway) statelessSession(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	id := r.Header.Get(mcpSessionHeader)
	if id == "" {
		if r.Method != http.MethodPost || !g.isInitialize(r) {
			return r, true
		}
		id = rand.Text()
		w.Header().Set(mcpSessionHeader, id)
	} else if err := g.core.CheckSession(id); err != nil {
		http.Error(w, mcpSessionHeader+": "+err.Error(), http.StatusBadRequest)
		return r, false
	}
	if r.Header.Get(SessionHeader) != "" {
		return r, true // an explicit Toolnexus-Session wins, as in stateful mode
	}
	r = r.Clone(r.Context())
	r.Header.Set(SessionHeader, id)
	return r, true
}

// isInitialize peeks at the body (putting it back) and reports whether it
// is one initialize request.
func (g *Gateway) isInitialize(r *http.Request) bool {
	head, err := io.ReadAll(io.LimitReader(r.Body, peekLimit))
	r.Body = readCloser{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
	if err != nil || len(head) == peekLimit {
		return false
	}
	var msg struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(head, &msg) == nil && msg.Method == "initialize"
}

type readCloser struct {
	io.Reader
	io.Closer
}
