package mcpgateway_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/inproc"
	"github.com/toolnexus/toolnexus/internal/testutil/mcpclient"
)

// TestEverythingAnnotationsAndStructuredContent: server-everything's
// get-structured-content declares a title, annotations and an output
// schema and returns structuredContent; all of it reaches a gRPC caller and
// an MCP client of /mcp unchanged, and toolnexus's own tools say what they
// are.
func TestEverythingAnnotationsAndStructuredContent(t *testing.T) {
	t.Parallel()
	entry := testutil.EverythingServer(t)
	g := inproc.Serve(t, fmt.Sprintf(`{"skills": [], "mcpServers": {"everything": {"command": "node", "args": [%q, "stdio"], "timeout": 60000}}}`, entry))
	const name = "everything_get-structured-content"

	// gRPC.
	got, err := g.Registry.GetTool(context.Background(), &pb.GetToolRequest{Name: name})
	if err != nil {
		t.Fatal(err)
	}
	a := got.GetTool().GetAnnotations()
	if a.GetTitle() != "Get Structured Content Tool" || !a.GetReadOnlyHint() || a.DestructiveHint == nil || a.GetDestructiveHint() ||
		!a.GetIdempotentHint() || a.OpenWorldHint == nil || a.GetOpenWorldHint() {
		t.Fatalf("annotations over gRPC: %v", a)
	}
	if props := got.GetTool().GetOutputSchema().GetFields()["properties"].GetStructValue().GetFields(); props["temperature"] == nil {
		t.Fatalf("output schema over gRPC: %v", got.GetTool().GetOutputSchema())
	}
	resp, err := g.Registry.Execute(context.Background(), &pb.ExecuteRequest{Name: name, Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{"location":"Chicago"}`}})
	if err != nil {
		t.Fatal(err)
	}
	sc := resp.GetResult().GetStructuredContent().GetFields()
	if resp.GetResult().GetIsError() || sc["temperature"].GetNumberValue() != 36 || sc["conditions"].GetStringValue() != "Light rain / drizzle" {
		t.Fatalf("structured content over gRPC: %v", resp.GetResult())
	}
	for tool, readOnly := range map[string]bool{"read": true, "grep": true, "bash": false, "write": false} {
		got, err := g.Registry.GetTool(context.Background(), &pb.GetToolRequest{Name: tool})
		if err != nil {
			t.Fatal(err)
		}
		if h := got.GetTool().GetAnnotations(); h.ReadOnlyHint == nil || h.GetReadOnlyHint() != readOnly || h.GetDestructiveHint() == readOnly {
			t.Errorf("%s: annotations %v", tool, h)
		}
	}

	// MCP.
	cs := g.MustConnect(t, "", nil)
	var listed *mcp.Tool
	for tl, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		if tl.Name == name {
			listed = tl
		}
	}
	if listed == nil || listed.Title != "Get Structured Content Tool" || listed.Annotations == nil || !listed.Annotations.ReadOnlyHint ||
		!listed.Annotations.IdempotentHint || listed.OutputSchema == nil {
		t.Fatalf("listed over MCP: %+v", listed)
	}
	res := mcpclient.Call(t, cs, name, map[string]any{"location": "Los Angeles"})
	m, _ := res.StructuredContent.(map[string]any)
	if res.IsError || m["temperature"] != float64(73) || m["conditions"] != "Sunny / Clear" {
		t.Fatalf("structured content over MCP: %+v", res)
	}
}
