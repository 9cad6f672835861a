package mcpgateway

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/internal/telemetry"
)

// traceContext continues the caller's trace for one tools/call: the
// params' _meta (traceparent, tracestate) names the exact request, so it
// wins over the HTTP request's traceparent header.
func traceContext(ctx context.Context, req *mcp.CallToolRequest) context.Context {
	if tp, _ := req.Params.Meta["traceparent"].(string); tp != "" {
		return telemetry.ExtractMeta(ctx, req.Params.Meta)
	}
	if req.Extra != nil && req.Extra.Header != nil {
		return telemetry.ExtractHeader(ctx, req.Extra.Header)
	}
	return ctx
}
