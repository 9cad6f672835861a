package testutil

import (
	"context"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// Direct runs a registry's tools by name with nothing in between: how a
// source's own tests drive the tools it published. The server never calls
// tools this way; its executor adds limits, validation and policy.
type Direct struct{ Reg *registry.Registry }

// Execute runs name as the current snapshot resolves it, with name set in
// the call; an unknown name is registry.UnknownTool.
func (d Direct) Execute(ctx context.Context, name string, call tool.Call) tool.Result {
	e, ok := d.Reg.Snapshot().Lookup(name)
	if !ok {
		return registry.UnknownTool(name)
	}
	call.Name = name
	return e.Tool.Execute(ctx, call)
}
