package mcp

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/toolnexus/toolnexus/internal/telemetry"
	"github.com/toolnexus/toolnexus/pkg/sources"
)

// reconnectSpan starts the span of one restart attempt ("mcp.reconnect"),
// a root span of its own: a restart happens in the background, outside any
// call. Its context carries the trace into initialize and tools/list.
// A no-op span when tracing is off.
func (s *Source) reconnectSpan(attempt int) (context.Context, trace.Span) {
	ctx := context.Background()
	if s.env.Tracing == nil {
		return ctx, noop.Span{}
	}
	return s.env.Tracing.Tracer(telemetry.ScopeName).Start(ctx, "mcp.reconnect",
		trace.WithNewRoot(),
		trace.WithAttributes(attribute.String("toolnexus.source", sources.KindMCP.Name), attribute.String("toolnexus.mcp.server", s.name),
			attribute.Int("toolnexus.mcp.attempt", attempt), attribute.String("toolnexus.mcp.transport", s.cfg.Type)))
}
