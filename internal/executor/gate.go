package executor

import (
	"context"
	"encoding/json"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// Gate is a last check on a call the allowlist admitted and whose
// arguments are valid, before it waits for a slot and runs: the core's
// policy engine. It sees the tool's registry entry (name, source) and the
// arguments the tool will get.
type Gate interface {
	// Check returns a result to end the call with instead of running it,
	// or nil and the answer the tool should get (a gate that consumed the
	// caller's answer itself hands the tool none).
	Check(ctx context.Context, e *registry.Entry, args json.RawMessage, answer *tool.Answer) (*tool.Result, *tool.Answer)
}
