package mcp

import (
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// TestOutputSchemaMismatchIsAnError: the MCP rule — structuredContent that
// does not match the tool's outputSchema is an error result naming the
// mismatch; a match, an error result, or a tool without a schema pass.
func TestOutputSchemaMismatchIsAnError(t *testing.T) {
	t.Parallel()
	c := newOutputChecker(&sdk.Tool{OutputSchema: map[string]any{"type": "object",
		"properties": map[string]any{"temperature": map[string]any{"type": "number"}}, "required": []any{"temperature"}}})
	ok := tool.Result{Output: "{}", StructuredContent: map[string]any{"temperature": 21.5}}
	if r := c.check(ok); r.IsError {
		t.Fatalf("matching content refused: %+v", r)
	}
	bad := c.check(tool.Result{Output: "{}", StructuredContent: map[string]any{"temperature": "hot"}})
	if !bad.IsError || !strings.Contains(bad.Output, "outputSchema") || !strings.Contains(bad.Output, "temperature") {
		t.Fatalf("mismatch: %+v", bad)
	}
	missing := c.check(tool.Result{Output: "{}", StructuredContent: map[string]any{}})
	if !missing.IsError || !strings.Contains(missing.Output, "temperature") {
		t.Fatalf("missing field: %+v", missing)
	}
	if r := c.check(tool.Failure("boom", nil)); r.Output != "boom" {
		t.Fatalf("an error result was rewritten: %+v", r)
	}
	var none *outputChecker
	if r := none.check(tool.Result{StructuredContent: map[string]any{"x": 1}}); r.IsError {
		t.Fatalf("no schema: %+v", r)
	}
}

func TestAnnotationsOf(t *testing.T) {
	t.Parallel()
	f := false
	a := annotationsOf(&sdk.Tool{Title: "T", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: &f}})
	if a.Title != "T" || !*a.ReadOnly || *a.Destructive || *a.Idempotent || a.OpenWorld != nil {
		t.Fatalf("annotations = %+v", a)
	}
	if annotationsOf(&sdk.Tool{}) != nil {
		t.Fatal("a tool without annotations got some")
	}
}

// The text view a model reads is the text parts joined, also beside
// structuredContent (the object goes to StructuredContent); a result with
// structuredContent and no text gets the object's JSON as its text view.
func TestStructuredContentKeepsTheTextView(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		res  *sdk.CallToolResult
		want string
	}{
		{"text beside the object", &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "Allowed directories:"}, &sdk.TextContent{Text: "/data"}},
			StructuredContent: map[string]any{"content": "Allowed directories:\n/data"}}, "Allowed directories:\n/data"},
		{"the object alone", &sdk.CallToolResult{StructuredContent: map[string]any{"sum": 3}}, `{"sum":3}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := mapResult(c.res, nil)
			if r.IsError || r.Output != c.want || r.StructuredContent == nil {
				t.Fatalf("result = %+v, want output %q and the structured content", r, c.want)
			}
		})
	}
}
