package mcpgateway

//lint:file-ignore SA1019 sampling is deprecated in the newest MCP protocol but still what MCP servers ask for; the gateway relays it to clients that declare it.

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/internal/plainjson"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// The pending kinds the gateway relays to its MCP client: an upstream MCP
// server's own requests, which an MCP client knows how to answer. Other
// kinds (question, approval) keep the _meta contract.
const (
	kindElicitation = "elicitation"
	kindSampling    = "sampling"
	// kindAuthorization is a caller's login at an OAuth upstream
	// (pkg/sources/oauthclient): put to the client as a URL-mode
	// elicitation, which only a client that declared elicitation.url
	// gets; any other keeps the _meta contract (the URL is in the text).
	kindAuthorization = "authorization"
	// kindRoots is an upstream on 2026-07-28 asking for the client's
	// roots: relayed to a client that declared roots (its own answer to
	// the upstream's question, on a call it made), declined for any other.
	kindRoots = "roots"
)

// answerOf is the answer an MCP client's response to a relayed request
// carries; nil for a response of another kind.
func answerOf(id string, resp any) *tool.Answer {
	switch r := resp.(type) {
	case *mcp.ElicitResult:
		if r.Action == "accept" {
			return &tool.Answer{ID: id, OK: true, Data: plainjson.Of(r.Content)}
		}
		return &tool.Answer{ID: id, Reason: "the MCP client answered " + r.Action}
	case *mcp.CreateMessageWithToolsResult, *mcp.CreateMessageResult:
		return &tool.Answer{ID: id, OK: true, Data: samplingAnswer(r)}
	case *mcp.ListRootsResult:
		return &tool.Answer{ID: id, OK: true, Data: plainjson.Of(r)}
	}
	return nil
}

// relayer answers a pending elicitation or sampling request from the
// call, for the core to resume the call with (Call.Relay): a client on an
// older protocol is asked here, during the call; for one that did not
// declare the capability it is declined here. For a client on the
// 2026-07-28 protocol it answers nil: the request goes back in the result's
// inputRequests (inputRequired, input.go), or the call is refused with
// -32021 when the client did not declare the capability (capability.go). The resumed rounds
// are one call: one audit line, one span, one rate limit charge.
func relayer(req *mcp.CallToolRequest) func(context.Context, tool.Result) *tool.Answer {
	return func(ctx context.Context, r tool.Result) *tool.Answer {
		p := r.Pending
		if p == nil || !relayed(p.Kind) {
			return nil
		}
		switch {
		case p.Kind == kindAuthorization && !clientCan(req.Session, p.Kind):
			return nil // the PENDING result, with the login URL, goes to the client as it is
		case multiRoundTrip(req.Session):
			// In the result: inputRequests, or -32021 for a client that
			// did not declare the capability (capability.go).
			return nil
		case !clientCan(req.Session, p.Kind):
			return &tool.Answer{ID: p.ID, Reason: "the MCP client does not support " + p.Kind}
		}
		return askClient(ctx, req.Session, p)
	}
}

// relayed reports whether a pending kind is an upstream's request the
// gateway puts to its MCP client.
func relayed(kind string) bool {
	switch kind {
	case kindElicitation, kindSampling, kindAuthorization, kindRoots:
		return true
	}
	return false
}

// multiRoundTrip reports whether the client speaks 2026-07-28 or later,
// where the server's requests travel in the result's inputRequests.
func multiRoundTrip(ss *mcp.ServerSession) bool {
	ip := ss.InitializeParams()
	return ip != nil && ip.ProtocolVersion >= "2026-07-28"
}

// askClient puts the request to a client on an older protocol as an
// elicitation/create or sampling/createMessage request and reads its
// answer. The SDK would do this itself for inputRequests, but it fails the
// whole tools/call when the client answers with an error (how a client
// refuses sampling), where the refusal belongs to the server that asked.
// The client has until the request expires (limits.pendingTimeout); past
// that the request is withdrawn from it and the call ends as expired.
func askClient(ctx context.Context, ss *mcp.ServerSession, p *tool.Pending) *tool.Answer {
	if !p.ExpiresAt.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, p.ExpiresAt)
		defer cancel()
	}
	var (
		res any
		err error
	)
	switch ir := inputRequest(p).(type) {
	case *mcp.ElicitParams:
		res, err = ss.Elicit(ctx, ir)
	case *mcp.CreateMessageParams:
		res, err = ss.CreateMessage(ctx, ir)
	case *mcp.ListRootsParams:
		res, err = ss.ListRoots(ctx, ir)
	}
	if err != nil {
		// A typed nil comes back with the error: do not read it.
		return &tool.Answer{ID: p.ID, Reason: "the MCP client refused the request: " + err.Error()}
	}
	if a := answerOf(p.ID, res); a != nil {
		return a
	}
	return &tool.Answer{ID: p.ID, Reason: "the MCP client's answer is not a " + p.Kind + " result"}
}

// clientCan reports whether the MCP client declared the capability.
func clientCan(ss *mcp.ServerSession, kind string) bool {
	if ss == nil {
		return false
	}
	ip := ss.InitializeParams()
	if ip == nil || ip.Capabilities == nil {
		return false
	}
	switch kind {
	case kindElicitation:
		return ip.Capabilities.Elicitation != nil
	case kindAuthorization:
		return ip.Capabilities.Elicitation != nil && ip.Capabilities.Elicitation.URL != nil
	case kindRoots:
		return ip.Capabilities.RootsV2 != nil
	}
	return ip.Capabilities.Sampling != nil
}

// inputRequest is the pending request as the MCP request it came from.
func inputRequest(p *tool.Pending) mcp.InputRequest {
	if p.Kind == kindAuthorization {
		return &mcp.ElicitParams{Mode: "url", Message: p.Prompt, URL: p.URL, ElicitationID: p.ID}
	}
	if p.Kind == kindRoots {
		return &mcp.ListRootsParams{}
	}
	if p.Kind == kindElicitation {
		ep := &mcp.ElicitParams{Message: p.Prompt, RequestedSchema: p.Data["requestedSchema"], URL: p.URL}
		if mode, _ := p.Data["mode"].(string); mode == "url" {
			ep.Mode = mode
		}
		return ep
	}
	var cp mcp.CreateMessageParams
	if b, err := json.Marshal(p.Data); err == nil {
		_ = json.Unmarshal(b, &cp)
	}
	return &cp
}

// samplingAnswer is a client's completion as a sampling answer: one
// content block (the first, when a newer client sent a list).
func samplingAnswer(r any) any {
	m, _ := plainjson.Of(r).(map[string]any)
	if list, ok := m["content"].([]any); ok && len(list) > 0 {
		m["content"] = list[0]
	}
	return m
}
