package core

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/executor"
	"github.com/toolnexus/toolnexus/internal/metrics"
	"github.com/toolnexus/toolnexus/internal/panics"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// Protocol labels for the per-source series: which front-end a call came
// through.
const (
	ProtocolGRPC = executor.ProtocolGRPC
	ProtocolMCP  = executor.ProtocolMCP
)

// Call is one tool call as a front-end decoded it from its wire: data
// only. Who calls is Caller, and only Caller.
type Call struct {
	Name string
	// Arguments is the arguments object as JSON; nil or empty means {}.
	// Read-only, as tool.Call.Arguments: a front-end may pass its request's
	// own bytes.
	Arguments json.RawMessage
	// Answer resumes a call that earlier returned OutcomePending.
	Answer *tool.Answer
	// Protocol is ProtocolGRPC or ProtocolMCP: the door the call came
	// through (the metrics label, and what the door serves: /mcp serves
	// server.mcp.tools).
	Protocol string
	// View is the named view the caller chose (server.mcp.views: /mcp/NAME,
	// gRPC metadata toolnexus-view); "" is the door's own. A name the config
	// does not have sees no tool.
	View string
	// Caller is the authenticated principal; nil when auth is off.
	Caller *auth.Principal
	// CallID is the model's id for this call, when the caller sent one.
	CallID string
	// Session is the caller's session id ("" = the shared workspace).
	Session string
	// Relay, when set, answers a pending request the call ended on, so
	// the call resumes at once (the /mcp gateway asks its client); nil
	// ends the call pending. The rounds are one call: one span, one
	// audit line, one rate limit charge.
	Relay func(ctx context.Context, r tool.Result) *tool.Answer
	// Stream is true when the call came through a streaming RPC
	// (ExecuteStream, or /mcp with a progress token): the audit and trace
	// record which method ran it.
	Stream bool
}

// Execute runs one call through the pipeline (pipeline.go, where the list
// of steps is): observe, view, rate limit, relay, validate, policy and
// approval, session, concurrency and timeout, run. It always returns a
// Result — a failure is a value — and the source label of the tool, or
// "unknown" for a name the caller cannot see.
func (c *Core) Execute(ctx context.Context, call Call) (tool.Result, string) {
	f := flow{Call: call, tool: c.exec.Prepared(call.Name)}
	res := c.handler(ctx, f)
	if f.tool == nil || res.Outcome == tool.OutcomeUnknownTool {
		return res, metrics.UnknownLabel
	}
	return res, f.tool.Source()
}

// Recovered is the one place a panic around a call is recorded: a front-end
// that recovers one while decoding a request or encoding a result (the tool
// itself is guarded inside Execute) hands it here. The stack goes to the
// log, the call is counted as a panic under the tool's source, and the
// returned result is what the caller gets.
func (c *Core) Recovered(ctx context.Context, name, protocol string, v any) tool.Result {
	msg := panics.Message(v)
	c.log.ErrorContext(ctx, "panic while executing", "tool", name, "protocol", protocol, "panic", msg, "stack", panics.Stack())
	c.exec.Count(c.exec.Prepared(name), protocol, tool.OutcomePanic)
	return tool.FailureWith(tool.OutcomePanic, msg)
}

// Logger is where the core logs.
func (c *Core) Logger() *slog.Logger { return c.log }
