package server

import (
	"encoding/json"
	"sync/atomic"

	"google.golang.org/protobuf/encoding/protojson"
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
	pt := &protoTools{snap: snap, tools: make([]*pb.Tool, len(entries)), byName: make(map[string]*pb.Tool, len(entries))}
	var reuse map[*tool.Tool]*pb.Tool
	if cur != nil {
		reuse = make(map[*tool.Tool]*pb.Tool, len(cur.tools))
		for i, e := range cur.snap.Entries() {
			reuse[e.Tool] = cur.tools[i]
		}
	}
	for i, e := range entries {
		p := reuse[e.Tool]
		if p == nil {
			p = toolToProto(e.Tool)
		}
		pt.tools[i] = p
		pt.byName[e.Tool.Name] = p
	}
	if cur == nil || cur.snap.Revision() < snap.Revision() {
		c.cur.Store(pt)
	}
	return pt
}

func toolToProto(t *tool.Tool) *pb.Tool {
	schema := &structpb.Struct{}
	if err := protojson.Unmarshal(t.InputSchema, schema); err != nil {
		// A schema that is valid JSON but not an object cannot be a Struct;
		// show the model the permissive default rather than nothing.
		schema, _ = structpb.NewStruct(map[string]any{"type": "object"})
	}
	return &pb.Tool{Name: t.Name, Description: t.Description, InputSchema: schema, Source: t.Source}
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
