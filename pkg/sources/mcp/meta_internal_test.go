package mcp

import (
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Every result of a source shares its metadata map; a truncated result
// gets its own copy with "truncated", and the shared map stays as it was.
func TestTruncationLeavesSharedMetadataAlone(t *testing.T) {
	shared := map[string]any{"server": "s"}
	long := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Repeat("x", 100)}}}
	r := capOutput(mapResult(long, shared), 10)
	if r.Metadata["truncated"] != true || r.Metadata["server"] != "s" {
		t.Fatalf("truncated result metadata = %v", r.Metadata)
	}
	if len(shared) != 1 || shared["server"] != "s" {
		t.Fatalf("the shared map changed: %v", shared)
	}
	short := capOutput(mapResult(&sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, shared), 10)
	if _, cut := short.Metadata["truncated"]; cut || len(short.Metadata) != 1 {
		t.Fatalf("an untruncated result after a truncated one: %v", short.Metadata)
	}
}
