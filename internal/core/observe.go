package core

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolnexus/toolnexus/internal/audit"
	"github.com/toolnexus/toolnexus/internal/executor"
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

// executeObserved is Execute with the trace span and the audit line
// around it, taken only when tracing or the audit log is on.
func (c *Core) executeObserved(ctx context.Context, call Call) (tool.Result, string) {
	start := time.Now()
	var span trace.Span
	var prepared *executor.ToolSpan
	if c.tracer != nil {
		// The span's name and attributes are the tool's, made once (a
		// name no tool has gets "execute_tool" alone: junk names must not
		// mint span names). The attributes are set when the call ends, in
		// one slice shared by every call with the same outcome.
		name := executor.OperationExecuteTool
		if prepared = c.exec.Span(call.Name); prepared != nil {
			name = prepared.Name
		}
		// The front-end's context is a long chain of values (gRPC's
		// stream, peer, metadata, stats tags, the principal...), and the
		// SDK looks the parent up several times per span: putting the
		// parent on top makes those lookups one step each.
		ctx = trace.ContextWithSpan(ctx, trace.SpanFromContext(ctx))
		ctx, span = c.tracer.Start(ctx, name, spanStart...)
	}
	res, source := c.execute(ctx, call)
	outcome := res.Resolved().String()
	if span != nil {
		c.endSpan(span, prepared, call, source, res)
	}
	if c.audit.On() {
		a := audit.Call{Method: method(call), Protocol: call.Protocol, Session: call.Session, Tool: call.Name,
			Source: source, CallID: call.CallID, Outcome: outcome, IsError: res.IsError,
			Duration: time.Since(start), Arguments: call.Arguments}
		if call.Caller != nil {
			a.Principal = call.Caller.Name
		}
		c.audit.Execute(ctx, a)
	}
	return res, source
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
func (c *Core) endSpan(span trace.Span, prepared *executor.ToolSpan, call Call, source string, res tool.Result) {
	o := res.Resolved()
	if prepared != nil && source == prepared.Source {
		span.SetAttributes(prepared.Attributes(call.Protocol, o)...)
	} else {
		// A name no tool has, or a call refused before it reached its
		// tool (counted under "unknown"): its own, unshared attributes.
		if prepared != nil {
			span.SetName(executor.OperationExecuteTool)
		}
		span.SetAttributes(executor.SpanAttributes(call.Name, source, call.Protocol, o)...)
	}
	if call.CallID != "" {
		span.SetAttributes(AttrCallID.String(call.CallID))
	}
	if call.Session != "" {
		span.SetAttributes(AttrSession.String(call.Session))
	}
	if res.IsError {
		span.SetStatus(codes.Error, o.String())
	}
	span.End()
}
