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
	// Relay, when set, answers a pending request the call ended on, so
	// the call resumes at once (the /mcp gateway asks its client); nil
	// ends the call pending. The rounds are one call: one span, one
	// audit line, one rate limit charge.
	Relay func(ctx context.Context, r tool.Result) *tool.Answer
	// Stream is true when the call came through a streaming RPC
	// (ExecuteStream, or /mcp with a progress token): the audit and trace
	// record which method ran it.
	Stream bool

	// resumed marks a relayed round of a call already admitted.
	resumed bool
}

// Execute runs one call through the pipeline (pipeline.go, where the order
// of the steps is): observe, resolve, rate limit, validate, policy and
// approval, session, concurrency and timeout, run. It always returns a Result — a failure is a
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

// maxRelayRounds bounds the rounds one call resumes through Call.Relay,
// so an upstream that keeps asking a client that cannot answer ends.
const maxRelayRounds = 16

// execute is Execute without the trace span and the audit line: the
// pipeline, and the rounds Call.Relay resumes.
func (c *Core) execute(ctx context.Context, call Call) (tool.Result, string) {
	res, source := c.executeOnce(ctx, call)
	if call.Relay == nil {
		return res, source
	}
	for range maxRelayRounds {
		if res.Outcome != tool.OutcomePending {
			break
		}
		a := call.Relay(ctx, res)
		if a == nil {
			break
		}
		call.Answer = a
		// A resumed round was admitted with the call: the rate limit
		// does not charge it again; every other step runs as for any call.
		call.resumed = true
		res, source = c.executeOnce(ctx, call)
	}
	return res, source
}

// executeOnce is one pass through the pipeline.
func (c *Core) executeOnce(ctx context.Context, call Call) (tool.Result, string) {
	req := executor.Request{Name: call.Name, Arguments: call.Arguments, Answer: call.Answer, Protocol: call.Protocol,
		Owner: tool.Owner{Principal: principalName(call), Session: call.Session}, Gate: c.gate(call), Resumed: call.resumed}
	req.Principal = req.Owner.Principal
	if call.Caller.Restricted() {
		req.Allow = call.Caller.Allows
	}
	if call.Session == "" && c.cfg.Load().Sessions.Required {
		// A front-end checks this first (INVALID_ARGUMENT); this is the
		// backstop for any path that does not.
		return c.refuse(call, tool.OutcomeInvalidArguments, ErrSessionRequired.Error()+": this server has sessions.required on"), metrics.UnknownLabel
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
