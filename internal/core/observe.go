package core

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolnexus/toolnexus/internal/audit"
	"github.com/toolnexus/toolnexus/internal/metrics"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// telemetryScope is the instrumentation scope of the core's spans.
const telemetryScope = "github.com/toolnexus/toolnexus"

// Span attribute keys: the OpenTelemetry GenAI ones and our own.
const (
	AttrOperation = attribute.Key("gen_ai.operation.name")
	AttrToolName  = attribute.Key("gen_ai.tool.name")
	AttrCallID    = attribute.Key("gen_ai.tool.call.id")
	AttrSource    = attribute.Key("toolnexus.source")
	AttrOutcome   = attribute.Key("toolnexus.outcome")
	AttrSession   = attribute.Key("toolnexus.session")
	AttrProtocol  = attribute.Key("toolnexus.protocol")
)

// SpanName is the name of a tool execution's span.
func SpanName(toolName string) string { return "execute_tool " + toolName }

// executeObserved is Execute with the trace span and the audit line
// around it, taken only when tracing or the audit log is on.
func (c *Core) executeObserved(ctx context.Context, call Call) (tool.Result, string) {
	start := time.Now()
	var span trace.Span
	if c.tracer != nil {
		attrs := make([]attribute.KeyValue, 0, 5)
		attrs = append(attrs, AttrOperation.String("execute_tool"), AttrToolName.String(call.Name), AttrProtocol.String(call.Protocol))
		if call.CallID != "" {
			attrs = append(attrs, AttrCallID.String(call.CallID))
		}
		if call.Session != "" {
			attrs = append(attrs, AttrSession.String(call.Session))
		}
		// The front-end's context is a long chain of values (gRPC's
		// stream, peer, metadata, stats tags, the principal...), and the
		// SDK looks the parent up several times per span: putting the
		// parent on top makes those lookups one step each.
		ctx = trace.ContextWithSpan(ctx, trace.SpanFromContext(ctx))
		ctx, span = c.tracer.Start(ctx, SpanName(call.Name), trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...))
	}
	res, source := c.execute(ctx, call)
	outcome := res.Resolved().String()
	if span != nil {
		if source == metrics.UnknownLabel {
			// A junk name must not mint a span name per junk name.
			span.SetName("execute_tool")
		}
		span.SetAttributes(AttrSource.String(source), AttrOutcome.String(outcome))
		if res.IsError {
			span.SetStatus(codes.Error, outcome)
		}
		span.End()
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
