package grpcapi

import (
	"encoding/json"
	"fmt"
	"sync/atomic"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// protoTools is the proto form of one snapshot's tool list, built once per
// revision (on first use) and shared by every ListTools/WatchTools reader.
type protoTools struct {
	snap   *registry.Snapshot
	tools  []*pb.Tool // same order as snap.Entries()
	byName map[string]*pb.Tool
	// wire holds each tool already marshalled. Listing responses are
	// assembled from these bytes instead of re-marshalling thousands of
	// Struct schemas on every call; see preEncoded.
	wire [][]byte
}

// protoCache keeps the latest protoTools; a reader that finds it stale
// builds the next one. Two readers racing build it twice, which is cheaper
// than making every reader wait on a lock.
type protoCache struct {
	cur atomic.Pointer[protoTools]
	// prev carries converted tools across revisions: a tool whose *tool.Tool
	// did not change keeps its *pb.Tool.
}

func (c *protoCache) get(snap *registry.Snapshot) *protoTools {
	cur := c.cur.Load()
	if cur != nil && cur.snap == snap {
		return cur
	}
	entries := snap.Entries()
	pt := &protoTools{snap: snap, tools: make([]*pb.Tool, len(entries)), byName: make(map[string]*pb.Tool, len(entries)), wire: make([][]byte, len(entries))}
	type converted struct {
		p    *pb.Tool
		wire []byte
	}
	var reuse map[*tool.Tool]converted
	if cur != nil {
		reuse = make(map[*tool.Tool]converted, len(cur.tools))
		for i, e := range cur.snap.Entries() {
			reuse[e.Tool] = converted{cur.tools[i], cur.wire[i]}
		}
	}
	for i, e := range entries {
		c, ok := reuse[e.Tool]
		if !ok {
			c.p = toolToProto(e.Tool)
			c.wire = encodeToolField(c.p)
		}
		pt.tools[i] = c.p
		pt.wire[i] = c.wire
		pt.byName[e.Tool.Name] = c.p
	}
	if cur == nil || cur.snap.Revision() < snap.Revision() {
		c.cur.Store(pt)
	}
	return pt
}

// The field numbers of `repeated Tool tools` in the listing responses.
const (
	listToolsField  protowire.Number = 1 // ListToolsResponse.tools
	watchToolsField protowire.Number = 2 // WatchToolsResponse.tools
)

func encodeToolField(t *pb.Tool) []byte {
	body, err := proto.Marshal(t)
	if err != nil {
		return nil
	}
	return body
}

// preEncoded sets the tools of a listing response from pre-encoded field
// bytes. They go in as the message's unknown fields, which proto.Marshal
// writes out verbatim: on the wire this is exactly a repeated `tools`
// field, so every client decodes it normally, while the server copies
// bytes instead of marshalling every Struct schema again. The Go message
// itself keeps Tools empty, so this is only for responses headed to the wire.
func preEncoded(m proto.Message, field protowire.Number, wire [][]byte) {
	n := 0
	for _, w := range wire {
		n += len(w) + 8 // tag and length fit in 8 bytes for any sane tool
	}
	buf := make([]byte, 0, n)
	for _, w := range wire {
		buf = protowire.AppendTag(buf, field, protowire.BytesType)
		buf = protowire.AppendBytes(buf, w)
	}
	m.ProtoReflect().SetUnknown(buf)
}

func toolToProto(t *tool.Tool) *pb.Tool {
	schema := &structpb.Struct{}
	if err := protojson.Unmarshal(t.InputSchema, schema); err != nil {
		// A schema that is valid JSON but not an object cannot be a Struct;
		// show the model the permissive default rather than nothing.
		schema, _ = structpb.NewStruct(map[string]any{"type": "object"})
	}
	out := &pb.Tool{Name: t.Name, Description: t.Description, InputSchema: schema, Source: t.Source,
		Annotations: annotationsToProto(t.Annotations)}
	if len(t.OutputSchema) > 0 {
		os := &structpb.Struct{}
		if protojson.Unmarshal(t.OutputSchema, os) == nil {
			out.OutputSchema = os
		}
	}
	return out
}

func annotationsToProto(a *tool.Annotations) *pb.ToolAnnotations {
	if a == nil {
		return nil
	}
	// Copies: the message must not share the tool's hints.
	hint := func(b *bool) *bool {
		if b == nil {
			return nil
		}
		v := *b
		return &v
	}
	return &pb.ToolAnnotations{Title: a.Title, ReadOnlyHint: hint(a.ReadOnly), DestructiveHint: hint(a.Destructive),
		IdempotentHint: hint(a.Idempotent), OpenWorldHint: hint(a.OpenWorld)}
}

var outcomeToProto = [...]pb.Outcome{
	tool.OutcomeUnspecified:      pb.Outcome_OUTCOME_UNSPECIFIED,
	tool.OutcomeOK:               pb.Outcome_OUTCOME_OK,
	tool.OutcomeToolError:        pb.Outcome_OUTCOME_TOOL_ERROR,
	tool.OutcomeUnknownTool:      pb.Outcome_OUTCOME_UNKNOWN_TOOL,
	tool.OutcomePanic:            pb.Outcome_OUTCOME_PANIC,
	tool.OutcomeTimeout:          pb.Outcome_OUTCOME_TIMEOUT,
	tool.OutcomeCanceled:         pb.Outcome_OUTCOME_CANCELED,
	tool.OutcomeInvalidArguments: pb.Outcome_OUTCOME_INVALID_ARGUMENTS,
	tool.OutcomeDenied:           pb.Outcome_OUTCOME_DENIED,
	tool.OutcomePending:          pb.Outcome_OUTCOME_PENDING,
}

// resultToProto converts a result. Metadata that cannot be a Struct (a
// value structpb does not take) is round-tripped through JSON first.
func resultToProto(r tool.Result) *pb.ToolResult {
	out := &pb.ToolResult{Output: r.Output, IsError: r.IsError}
	o := r.Resolved()
	if int(o) < len(outcomeToProto) {
		out.Outcome = outcomeToProto[o]
	}
	if len(r.Metadata) > 0 {
		out.Metadata = toStruct(r.Metadata)
	}
	if len(r.Content) > 0 {
		out.Content = contentToProto(r.Content)
	}
	if r.StructuredContent != nil {
		out.StructuredContent = toStruct(r.StructuredContent)
	}
	if r.Pending != nil {
		p := r.Pending
		out.Pending = &pb.PendingRequest{Id: p.ID, Kind: p.Kind, Prompt: p.Prompt, Url: p.URL}
		if len(p.Data) > 0 {
			out.Pending.Data = toStruct(p.Data)
		}
		if !p.ExpiresAt.IsZero() {
			out.Pending.ExpiresAt = timestamppb.New(p.ExpiresAt)
		}
	}
	return out
}

func toStruct(m map[string]any) *structpb.Struct {
	if len(m) == 1 {
		for k, v := range m {
			if s, ok := v.(string); ok && utf8.ValidString(k) && utf8.ValidString(s) {
				return sharedStruct(k, s)
			}
		}
	}
	if s, err := structpb.NewStruct(m); err == nil {
		return s
	}
	// Typed values (ints of other widths, structs, slices of strings...):
	// let encoding/json normalise them.
	b, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	s := &structpb.Struct{}
	if protojson.Unmarshal(b, s) != nil {
		return nil
	}
	return s
}

func answerFromProto(a *pb.Answer) *tool.Answer {
	if a == nil {
		return nil
	}
	ans := &tool.Answer{ID: a.GetId(), OK: a.GetOk(), Reason: a.GetReason()}
	if a.GetData() != nil {
		ans.Data = a.GetData().AsInterface()
	}
	return ans
}

// contentToProto converts a rich result's parts. A resource link becomes a
// resource without contents: its URI and type, nothing embedded.
func contentToProto(parts []tool.Content) []*pb.Content {
	out := make([]*pb.Content, 0, len(parts))
	for _, c := range parts {
		var p *pb.Content
		switch c.Kind {
		case tool.ContentText:
			p = &pb.Content{Kind: &pb.Content_Text{Text: &pb.TextContent{Text: c.Text}}}
		case tool.ContentImage:
			p = &pb.Content{Kind: &pb.Content_Image{Image: &pb.MediaContent{MimeType: c.MIMEType, Data: c.Data}}}
		case tool.ContentAudio:
			p = &pb.Content{Kind: &pb.Content_Audio{Audio: &pb.MediaContent{MimeType: c.MIMEType, Data: c.Data}}}
		case tool.ContentResource, tool.ContentResourceLink:
			r := &pb.ResourceContent{Uri: c.URI, MimeType: c.MIMEType}
			switch {
			case c.Kind == tool.ContentResourceLink:
			case c.Blob:
				r.Contents = &pb.ResourceContent_Blob{Blob: c.Data}
			default:
				r.Contents = &pb.ResourceContent_Text{Text: c.Text}
			}
			p = &pb.Content{Kind: &pb.Content_Resource{Resource: r}}
		default:
			continue
		}
		out = append(out, p)
	}
	return out
}

// toValue converts a log event's data (a string or any JSON value).
func toValue(v any) *structpb.Value {
	if v == nil {
		return nil
	}
	if pv, err := structpb.NewValue(v); err == nil {
		return pv
	}
	b, err := json.Marshal(v)
	if err != nil {
		return structpb.NewStringValue(fmt.Sprint(v))
	}
	pv := &structpb.Value{}
	if protojson.Unmarshal(b, pv) != nil {
		return structpb.NewStringValue(string(b))
	}
	return pv
}
