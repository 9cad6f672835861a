package core

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolnexus/toolnexus/internal/audit"
	"github.com/toolnexus/toolnexus/internal/executor"
	"github.com/toolnexus/toolnexus/internal/metrics"
	"github.com/toolnexus/toolnexus/internal/panics"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// telemetryScope is the instrumentation scope of the core's spans.
const telemetryScope = "github.com/toolnexus/toolnexus"

// Span attribute keys: the OpenTelemetry GenAI ones and our own.
const (
	AttrOperation = executor.AttrOperation
	AttrToolName  = executor.AttrToolName
	AttrCallID    = executor.AttrCallID
	AttrSource    = executor.AttrSource
	AttrOutcome   = executor.AttrOutcome
	AttrSession   = executor.AttrSession
	AttrProtocol  = executor.AttrProtocol
)

// SpanName is the name of a tool execution's span.
func SpanName(toolName string) string { return executor.SpanName(toolName) }

// spanStart are the start options of every execute_tool span, made once.
var spanStart = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)}

// observe is the first step: it counts the call in flight and, when it
// ends, records its outcome once — toolnexus_tool_calls_total, the
// duration and the sandbox refusals (executor.Record), and with tracing or
// the audit log on (and only then) the execute_tool span and the audit
// line. It is also the call's last guard: a panic anywhere below (a step,
// or the tool, which runs without a recover of its own) is a result here.
func (c *Core) observe(next handler) handler {
	return func(ctx context.Context, f flow) tool.Result {
		if c.tracer != nil || c.audit.On() {
			return c.observed(ctx, f, next)
		}
		return c.counted(ctx, f, next)
	}
}

// counted runs the rest of the call between its Start and End.
func (c *Core) counted(ctx context.Context, f flow, next handler) (res tool.Result) {
	rec := c.exec.Start(f.tool, f.Protocol)
	defer func() {
		if v := recover(); v != nil {
			res = tool.FailureWith(tool.OutcomePanic, panics.Log(c.log, f.Name, v))
		}
		rec.End(ctx, recordedOutcome(f.tool, res), res.Refusal)
	}()
	return next(ctx, f)
}

// recordedOutcome is the outcome a call is recorded with. A tool the view
// hid answered its caller as an unknown name, but the operator's records
// say what happened: denied, under the tool's own labels. (Only the view
// step answers unknown_tool for a name that resolved.)
func recordedOutcome(p *executor.Prepared, res tool.Result) tool.Outcome {
	o := res.Resolved()
	if o == tool.OutcomeUnknownTool && p != nil {
		return tool.OutcomeDenied
	}
	return o
}

// recordedSource is the source label of a call's records.
func recordedSource(p *executor.Prepared) string {
	if p == nil {
		return metrics.UnknownLabel
	}
	return p.Source()
}

// observed is counted with the trace span and the audit line around it.
func (c *Core) observed(ctx context.Context, f flow, next handler) tool.Result {
	start := time.Now()
	var span trace.Span
	var prepared *executor.ToolSpan
	if c.tracer != nil {
		// The span's name and attributes are the tool's, made once (a
		// name no tool has gets "execute_tool" alone: junk names must not
		// mint span names). The attributes are set when the call ends, in
		// one slice shared by every call with the same outcome.
		name := executor.OperationExecuteTool
		if f.tool != nil {
			prepared = f.tool.Span()
			name = prepared.Name
		}
		// The front-end's context is a long chain of values (gRPC's
		// stream, peer, metadata, stats tags, the principal...), and the
		// SDK looks the parent up several times per span: putting the
		// parent on top makes those lookups one step each.
		ctx = trace.ContextWithSpan(ctx, trace.SpanFromContext(ctx))
		ctx, span = c.tracer.Start(ctx, name, spanStart...)
	}
	res := c.counted(ctx, f, next)
	outcome, source := recordedOutcome(f.tool, res), recordedSource(f.tool)
	if span != nil {
		c.endSpan(span, prepared, f.Call, source, outcome, res.IsError)
	}
	if c.audit.On() {
		a := audit.Call{Method: method(f.Call), Protocol: f.Protocol, Session: f.Session, Tool: f.Name,
			Source: source, CallID: f.CallID, Outcome: outcome.String(), IsError: res.IsError,
			Duration: time.Since(start), Arguments: f.Arguments}
		if f.Caller != nil {
			a.Principal = f.Caller.Name
		}
		c.audit.Execute(ctx, a)
	}
	return res
}

func method(call Call) string {
	switch {
	case call.Protocol == ProtocolMCP:
		return "tools/call"
	case call.Stream:
		return "ExecuteStream"
	}
	return "Execute"
}

// endSpan sets the span's attributes and status and ends it.
func (c *Core) endSpan(span trace.Span, prepared *executor.ToolSpan, call Call, source string, o tool.Outcome, isError bool) {
	if prepared != nil && source == prepared.Source {
		span.SetAttributes(prepared.Attributes(call.Protocol, o)...)
	} else {
		// A name no tool has: its own, unshared attributes.
		span.SetAttributes(executor.SpanAttributes(call.Name, source, call.Protocol, o)...)
	}
	if call.CallID != "" {
		span.SetAttributes(AttrCallID.String(call.CallID))
	}
	if call.Session != "" {
		span.SetAttributes(AttrSession.String(call.Session))
	}
	if isError {
		span.SetStatus(codes.Error, o.String())
	}
	span.End()
}
