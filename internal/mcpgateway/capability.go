package mcpgateway

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// missingCapability is the 2026-07-28 answer to a call that suspended on an
// upstream MCP server's elicitation, sampling or roots request when the client did
// not declare that capability in its request's _meta: the protocol's
// MissingRequiredClientCapabilityError (-32021, which the SDK sends with
// HTTP 400), naming the capability, rather than a result the client cannot
// act on. nil for any other call. (toolnexus's own pending kinds — a
// question, an A2A agent's input — keep the toolnexus/pending _meta
// contract, which any client can answer.) Of a round of several requests
// the client is shown those it declared (inputRequired), so this is the
// answer once the next one to answer is of a kind it did not declare.
func missingCapability(req *mcp.CallToolRequest, r tool.Result) error {
	p := r.Pending
	if r.Outcome != tool.OutcomePending || p == nil || !multiRoundTrip(req.Session) {
		return nil
	}
	if p.Kind != kindElicitation && p.Kind != kindSampling && p.Kind != kindRoots || clientCan(req.Session, p.Kind) {
		return nil
	}
	data, _ := json.Marshal(map[string]any{"requiredCapabilities": map[string]any{p.Kind: map[string]any{}}})
	return &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Data: data,
		Message: fmt.Sprintf("the tool needs the client's %s capability: declare it in _meta[\"io.modelcontextprotocol/clientCapabilities\"] to be asked", p.Kind)}
}
