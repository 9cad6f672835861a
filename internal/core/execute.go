package core

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/executor"
	"github.com/toolnexus/toolnexus/internal/metrics"
	"github.com/toolnexus/toolnexus/internal/panics"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// Protocol labels for the per-source series: which front-end a call came
// through.
const (
	ProtocolGRPC = executor.ProtocolGRPC
	ProtocolMCP  = executor.ProtocolMCP
)

// Call is one tool call as a front-end decoded it from its wire.
type Call struct {
	Name string
	// Arguments is the arguments object as JSON; nil or empty means {}.
	// Read-only, as tool.Call.Arguments: a front-end may pass its request's
	// own bytes.
	Arguments json.RawMessage
	// Answer resumes a call that earlier returned OutcomePending.
	Answer *tool.Answer
	// Protocol is ProtocolGRPC or ProtocolMCP (the metrics label).
	Protocol string
	// Caller is the authenticated principal; nil when auth is off.
	Caller *auth.Principal
	// CallID is the model's id for this call, when the caller sent one.
	CallID string
	// Session is the caller's session id ("" = the shared workspace).
	Session string
	// Stream is true when the call came through a streaming RPC
	// (ExecuteStream, or /mcp with a progress token): the audit and trace
	// record which method ran it.
	Stream bool
}

// Execute runs one call: resolve the name in the current snapshot, check
// the caller's allowlist, validate the arguments, apply the limits, run the
// tool, record the metrics. It always returns a Result — a failure is a
// value — and the source label the call was counted under.
func (c *Core) Execute(ctx context.Context, call Call) (res tool.Result, source string) {
	if c.isCodeModeTool(call.Name) {
		ctx = context.WithValue(ctx, outerCallKey{}, call)
	}
	if c.tracer != nil || c.audit.On() {
		res, source = c.executeObserved(ctx, call)
	} else {
		res, source = c.execute(ctx, call)
	}
	if res.Outcome == tool.OutcomeDenied && source != metrics.UnknownLabel && !call.Caller.Allows(call.Name, source) {
		// The executor refused a tool outside the caller's allowlist. The
		// caller gets exactly the answer for a name that does not exist,
		// so probing names tells it nothing; metrics and the audit trail
		// still say denied. A policy's denial is for a tool the caller
		// sees, so it says what refused it.
		return registry.UnknownTool(call.Name), metrics.UnknownLabel
	}
	return res, source
}

// execute is Execute without the trace span and the audit line.
func (c *Core) execute(ctx context.Context, call Call) (tool.Result, string) {
	req := executor.Request{Name: call.Name, Arguments: call.Arguments, Answer: call.Answer, Protocol: call.Protocol,
		Owner: tool.Owner{Principal: principalName(call), Session: call.Session}, Gate: c.gate(call)}
	req.Principal = req.Owner.Principal
	if call.Caller.Restricted() {
		req.Allow = call.Caller.Allows
	}
	if call.Session == "" {
		if c.cfg.Load().Sessions.Required {
			// A front-end checks this first (INVALID_ARGUMENT); this is
			// the backstop for any path that does not.
			return c.refuse(call, tool.OutcomeInvalidArguments, ErrSessionRequired.Error()+": this server has sessions.required on"), metrics.UnknownLabel
		}
	} else if e, known := c.exec.Snapshot().Lookup(call.Name); known && call.Caller.Allows(e.Tool.Name, e.Tool.Source) {
		// Only a call that reaches a tool opens (or creates) its session:
		// an unknown or denied name is answered without touching the disk.
		sctx, lease, refused := c.enterSession(ctx, call)
		if refused != nil {
			return *refused, metrics.UnknownLabel
		}
		defer lease.Release()
		ctx = sctx
	}
	return c.exec.Execute(ctx, req)
}

// Recovered is the one place a panic around a call is recorded: a front-end
// that recovers one while decoding a request or encoding a result (the tool
// itself is guarded inside Execute) hands it here. The stack goes to the
// log, the call is counted as a panic under the tool's source, and the
// returned result is what the caller gets.
func (c *Core) Recovered(ctx context.Context, name, protocol string, v any) tool.Result {
	msg := panics.Message(v)
	c.log.ErrorContext(ctx, "panic while executing", "tool", name, "protocol", protocol, "panic", msg, "stack", panics.Stack())
	source, toolLabel := metrics.UnknownLabel, metrics.UnknownLabel
	if e, ok := c.exec.Snapshot().Lookup(name); ok {
		source, toolLabel = e.Tool.Source, e.Tool.Name
	}
	c.metrics.Calls.WithLabelValues(source, toolLabel, tool.OutcomePanic.String(), protocol).Inc()
	return tool.FailureWith(tool.OutcomePanic, msg)
}

// Logger is where the core logs.
func (c *Core) Logger() *slog.Logger { return c.log }
