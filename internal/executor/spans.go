package executor

import (
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// Span attribute keys of a tool execution's span: the OpenTelemetry GenAI
// ones and toolnexus's own.
const (
	AttrOperation = attribute.Key("gen_ai.operation.name")
	AttrToolName  = attribute.Key("gen_ai.tool.name")
	AttrCallID    = attribute.Key("gen_ai.tool.call.id")
	AttrSource    = attribute.Key("toolnexus.source")
	AttrOutcome   = attribute.Key("toolnexus.outcome")
	AttrSession   = attribute.Key("toolnexus.session")
	AttrProtocol  = attribute.Key("toolnexus.protocol")
)

// OperationExecuteTool is gen_ai.operation.name of a tool execution, and
// the span name of a call to a name no tool has.
const OperationExecuteTool = "execute_tool"

// SpanName is the name of a tool execution's span.
func SpanName(toolName string) string { return OperationExecuteTool + " " + toolName }

// SpanAttributes are the attributes every execution span has, in the
// order they are set.
func SpanAttributes(toolName, source, protocol string, o tool.Outcome) []attribute.KeyValue {
	return []attribute.KeyValue{
		AttrOperation.String(OperationExecuteTool), AttrToolName.String(toolName), AttrSource.String(source),
		AttrProtocol.String(protocol), AttrOutcome.String(o.String()),
	}
}

// ToolSpan is what a traced call's span needs from its tool: its name and
// its attributes, made on the tool's first traced call and kept as long
// as the tool keeps its name, source and schema, so a traced call builds
// neither a span name nor an attribute list.
type ToolSpan struct {
	// Name is "execute_tool {tool}".
	Name string
	// Source is the tool's source label.
	Source string

	tool  string
	attrs [len(protocols)][tool.OutcomePending + 1]atomicSlice
}

// Span is the tool's prepared span data, made on its first traced call.
func (p *Prepared) Span() *ToolSpan {
	m := p.meta
	if s := m.span.Load(); s != nil {
		return s
	}
	s := &ToolSpan{Name: SpanName(m.name), Source: m.source, tool: m.name}
	if !m.span.CompareAndSwap(nil, s) {
		return m.span.Load()
	}
	return s
}

// Attributes are the span's attributes for a call through protocol that
// ended with o. The slice is shared by every such call: read it, never
// change it.
func (s *ToolSpan) Attributes(protocol string, o tool.Outcome) []attribute.KeyValue {
	if int(o) >= len(s.attrs[0]) {
		o = tool.OutcomeToolError
	}
	p := protocolIndex(protocol)
	slot := &s.attrs[p][o]
	if a := slot.Load(); a != nil {
		return *a
	}
	a := SpanAttributes(s.tool, s.Source, protocols[p], o)
	slot.Store(&a)
	return a
}

type atomicSlice = atomic.Pointer[[]attribute.KeyValue]
