package mcpgateway

import (
	"bytes"
	"encoding/json"
	"reflect"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// describe adds what MCP 2025-06-18 lets a tool say about itself: its
// title and annotations, and the JSON Schema of its structured results.
func describe(out *mcp.Tool, t *tool.Tool) {
	if a := t.Annotations; a != nil {
		out.Title = a.Title
		out.Annotations = &mcp.ToolAnnotations{Title: a.Title, DestructiveHint: a.Destructive, OpenWorldHint: a.OpenWorld}
		if a.ReadOnly != nil {
			out.Annotations.ReadOnlyHint = *a.ReadOnly
		}
		if a.Idempotent != nil {
			out.Annotations.IdempotentHint = *a.Idempotent
		}
	}
	// Only an object schema: the SDK refuses (panics on) anything else,
	// and structured content is always an object.
	var schema map[string]any
	if len(t.OutputSchema) > 0 && json.Unmarshal(t.OutputSchema, &schema) == nil && schema != nil {
		out.OutputSchema = schema
	}
}

// sameDescription compares what describe adds, so a tool whose hints or
// output schema changed is registered again.
func sameDescription(a, b *tool.Tool) bool {
	return bytes.Equal(a.OutputSchema, b.OutputSchema) && reflect.DeepEqual(a.Annotations, b.Annotations)
}

// structured puts a result's structured content in its MCP place.
func structured(out *mcp.CallToolResult, r tool.Result) {
	if r.StructuredContent != nil {
		out.StructuredContent = r.StructuredContent
	}
}
