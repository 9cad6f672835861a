package mcpgateway

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// CodeRateLimited is the JSON-RPC error code of a tools/call over a rate
// limit (the implementation-defined server range, -32000 to -32099).
const CodeRateLimited = -32029

// rateLimitData is the error's data: when to retry, and which limit.
type rateLimitData struct {
	RetryAfterMs int64  `json:"retryAfterMs"`
	Limit        string `json:"limit"`
}

// rateLimited is the JSON-RPC error of a call over a rate limit, the MCP
// counterpart of gRPC's RESOURCE_EXHAUSTED with RetryInfo.
func rateLimited(r *tool.Throttle) error {
	ms := max(r.RetryAfter.Milliseconds(), 1)
	data, _ := json.Marshal(rateLimitData{RetryAfterMs: ms, Limit: r.Limit})
	return &jsonrpc.Error{Code: CodeRateLimited, Message: fmt.Sprintf("rate limited by %s: retry after %d ms", r.Limit, ms), Data: data}
}
