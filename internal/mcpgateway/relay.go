package mcpgateway

//lint:file-ignore SA1019 sampling is deprecated in the newest MCP protocol but still what MCP servers ask for; the gateway relays it to clients that declare it.

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// The pending kinds the gateway relays to its MCP client: an upstream MCP
// server's own requests, which an MCP client knows how to answer. Other
// kinds (question, approval) keep the _meta contract.
const (
	kindElicitation = "elicitation"
	kindSampling    = "sampling"
)

// maxRelayRounds bounds the declines one tools/call answers on its own, so
// an upstream that keeps asking a client that cannot answer ends.
const maxRelayRounds = 16

// answerFromInput reads the answer to a relayed request from a tools/call
// retry (the multi-round-trip inputResponses; the SDK fills them in for
// clients on older protocols after asking them itself).
func answerFromInput(req *mcp.CallToolRequest, prev *tool.Answer) *tool.Answer {
	if prev != nil || len(req.Params.InputResponses) == 0 {
		return prev
	}
	for id, resp := range req.Params.InputResponses {
		switch r := resp.(type) {
		case *mcp.ElicitResult:
			if r.Action == "accept" {
				return &tool.Answer{ID: id, OK: true, Data: plain(r.Content)}
			}
			return &tool.Answer{ID: id, Reason: "the MCP client answered " + r.Action}
		case *mcp.CreateMessageWithToolsResult, *mcp.CreateMessageResult:
			return &tool.Answer{ID: id, OK: true, Data: samplingAnswer(r)}
		}
	}
	return prev
}

// relay handles a pending elicitation or sampling request from the call:
// to a client that declared the capability it becomes the result's
// inputRequests (the SDK asks a client on an older protocol directly);
// for a client that did not, it is declined here and the call goes on.
func (g *Gateway) relay(ctx context.Context, req *mcp.CallToolRequest, call core.Call, r tool.Result, source string) (tool.Result, string, mcp.InputRequestMap) {
	for range maxRelayRounds {
		p := r.Pending
		if r.Outcome != tool.OutcomePending || p == nil || (p.Kind != kindElicitation && p.Kind != kindSampling) {
			return r, source, nil
		}
		if clientCan(req.Session, p.Kind) {
			return r, source, mcp.InputRequestMap{p.ID: inputRequest(p)}
		}
		call.Answer = &tool.Answer{ID: p.ID, Reason: "the MCP client does not support " + p.Kind}
		r, source = g.core.Execute(ctx, call)
	}
	return r, source, nil
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
	if kind == kindElicitation {
		return ip.Capabilities.Elicitation != nil
	}
	return ip.Capabilities.Sampling != nil
}

// inputRequest is the pending request as the MCP request it came from.
func inputRequest(p *tool.Pending) mcp.InputRequest {
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
	m, _ := plain(r).(map[string]any)
	if list, ok := m["content"].([]any); ok && len(list) > 0 {
		m["content"] = list[0]
	}
	return m
}

func plain(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	return out
}
