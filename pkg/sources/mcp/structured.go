package mcp

import (
	"encoding/json"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// annotationsOf carries a server tool's annotations (and its title, which
// MCP keeps on the tool itself too). MCP's readOnlyHint and idempotentHint
// default to false on the wire, so they are known whenever annotations are
// sent; the other two are known only when the server set them.
func annotationsOf(t *sdk.Tool) *tool.Annotations {
	a := t.Annotations
	if a == nil {
		if t.Title == "" {
			return nil
		}
		return &tool.Annotations{Title: t.Title}
	}
	out := &tool.Annotations{Title: a.Title, ReadOnly: &a.ReadOnlyHint, Idempotent: &a.IdempotentHint,
		Destructive: a.DestructiveHint, OpenWorld: a.OpenWorldHint}
	if out.Title == "" {
		out.Title = t.Title
	}
	// Copies, so the registry's tool shares nothing with the SDK's list.
	out.ReadOnly, out.Idempotent = copyBool(out.ReadOnly), copyBool(out.Idempotent)
	out.Destructive, out.OpenWorld = copyBool(out.Destructive), copyBool(out.OpenWorld)
	return out
}

func copyBool(b *bool) *bool {
	if b == nil {
		return nil
	}
	v := *b
	return &v
}

// outputChecker validates structured results against a tool's output
// schema, compiled on first use and kept while the tool lives.
type outputChecker struct {
	schema json.RawMessage
	once   sync.Once
	valid  func(any) error // nil when the schema does not compile
}

func newOutputChecker(t *sdk.Tool) *outputChecker {
	if t.OutputSchema == nil {
		return nil
	}
	b, err := json.Marshal(t.OutputSchema)
	if err != nil || string(b) == "null" {
		return nil
	}
	return &outputChecker{schema: b}
}

func (c *outputChecker) raw() json.RawMessage {
	if c == nil {
		return nil
	}
	return c.schema
}

// check applies the MCP rule: a result whose structuredContent does not
// match the tool's outputSchema is an error naming the mismatch. A server
// whose own schema does not compile is taken at its word.
func (c *outputChecker) check(r tool.Result) tool.Result {
	if c == nil || r.IsError || r.StructuredContent == nil {
		return r
	}
	c.once.Do(func() {
		var schema any
		if json.Unmarshal(c.schema, &schema) != nil {
			return
		}
		if sch, err := compileSchema(schema); err == nil {
			c.valid = func(v any) error { return validateCompiled(sch, v) }
		}
	})
	if c.valid == nil {
		return r
	}
	if err := c.valid(r.StructuredContent); err != nil {
		return tool.Failure("the tool's structuredContent does not match its outputSchema: "+err.Error(), r.Metadata)
	}
	return r
}
