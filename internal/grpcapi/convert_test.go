package grpcapi

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

func mustStruct(t *testing.T, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A result reaches the wire with every field it has, the outcome mapped
// one to one, and typed metadata normalised rather than dropped.
func TestResultToProto(t *testing.T) {
	t.Parallel()
	expires := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name string
		in   tool.Result
		want *pb.ToolResult
	}{
		{"ok", tool.Result{Output: "hi"}, &pb.ToolResult{Output: "hi", Outcome: pb.Outcome_OUTCOME_OK}},
		{"tool error", tool.Result{Output: "bad", IsError: true}, &pb.ToolResult{Output: "bad", IsError: true, Outcome: pb.Outcome_OUTCOME_TOOL_ERROR}},
		{"timeout", tool.FailureWith(tool.OutcomeTimeout, "slow"), &pb.ToolResult{Output: "slow", IsError: true, Outcome: pb.Outcome_OUTCOME_TIMEOUT}},
		{"panic", tool.FailureWith(tool.OutcomePanic, "boom"), &pb.ToolResult{Output: "boom", IsError: true, Outcome: pb.Outcome_OUTCOME_PANIC}},
		{"denied", tool.FailureWith(tool.OutcomeDenied, "no"), &pb.ToolResult{Output: "no", IsError: true, Outcome: pb.Outcome_OUTCOME_DENIED}},
		{"invalid arguments", tool.FailureWith(tool.OutcomeInvalidArguments, "x"), &pb.ToolResult{Output: "x", IsError: true, Outcome: pb.Outcome_OUTCOME_INVALID_ARGUMENTS}},
		{"unknown tool", tool.FailureWith(tool.OutcomeUnknownTool, "?"), &pb.ToolResult{Output: "?", IsError: true, Outcome: pb.Outcome_OUTCOME_UNKNOWN_TOOL}},
		{"one string of metadata", tool.Result{Output: "o", Metadata: map[string]any{"k": "v"}},
			&pb.ToolResult{Output: "o", Outcome: pb.Outcome_OUTCOME_OK, Metadata: mustStruct(t, map[string]any{"k": "v"})}},
		{"typed metadata", tool.Result{Metadata: map[string]any{"n": int32(3), "l": []string{"a"}}},
			&pb.ToolResult{Outcome: pb.Outcome_OUTCOME_OK, Metadata: mustStruct(t, map[string]any{"n": 3.0, "l": []any{"a"}})}},
		{"pending", tool.Result{Outcome: tool.OutcomePending, Pending: &tool.Pending{ID: "p1", Kind: "confirm", Prompt: "ok?", URL: "https://x", Data: map[string]any{"a": true}, ExpiresAt: expires}},
			&pb.ToolResult{Outcome: pb.Outcome_OUTCOME_PENDING, Pending: &pb.PendingRequest{Id: "p1", Kind: "confirm", Prompt: "ok?", Url: "https://x",
				Data: mustStruct(t, map[string]any{"a": true}), ExpiresAt: timestamppb.New(expires)}}},
		{"rich content", tool.Result{Content: []tool.Content{
			{Kind: tool.ContentText, Text: "t"},
			{Kind: tool.ContentImage, MIMEType: "image/png", Data: []byte{1}},
			{Kind: tool.ContentAudio, MIMEType: "audio/wav", Data: []byte{2}},
			{Kind: tool.ContentResource, URI: "file:///a", MIMEType: "text/plain", Text: "body"},
			{Kind: tool.ContentResource, URI: "file:///b", Blob: true, Data: []byte{3}},
			{Kind: tool.ContentResourceLink, URI: "file:///c"},
		}}, &pb.ToolResult{Outcome: pb.Outcome_OUTCOME_OK, Content: []*pb.Content{
			{Kind: &pb.Content_Text{Text: &pb.TextContent{Text: "t"}}},
			{Kind: &pb.Content_Image{Image: &pb.MediaContent{MimeType: "image/png", Data: []byte{1}}}},
			{Kind: &pb.Content_Audio{Audio: &pb.MediaContent{MimeType: "audio/wav", Data: []byte{2}}}},
			{Kind: &pb.Content_Resource{Resource: &pb.ResourceContent{Uri: "file:///a", MimeType: "text/plain", Contents: &pb.ResourceContent_Text{Text: "body"}}}},
			{Kind: &pb.Content_Resource{Resource: &pb.ResourceContent{Uri: "file:///b", Contents: &pb.ResourceContent_Blob{Blob: []byte{3}}}}},
			{Kind: &pb.Content_Resource{Resource: &pb.ResourceContent{Uri: "file:///c"}}},
		}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := resultToProto(tc.in); !proto.Equal(got, tc.want) {
				t.Errorf("resultToProto:\n got %v\nwant %v", got, tc.want)
			}
		})
	}
}

// Every outcome the core can return has its own wire value.
func TestEveryOutcomeHasAWireValue(t *testing.T) {
	t.Parallel()
	seen := map[pb.Outcome]tool.Outcome{}
	for o := tool.OutcomeOK; o <= tool.OutcomePending; o++ {
		p := resultToProto(tool.FailureWith(o, "")).GetOutcome()
		if p == pb.Outcome_OUTCOME_UNSPECIFIED {
			t.Errorf("outcome %s has no wire value", o)
		}
		if prev, dup := seen[p]; dup {
			t.Errorf("outcomes %s and %s share the wire value %s", prev, o, p)
		}
		seen[p] = o
	}
}

// An ExecuteRequest becomes the core call the front-end hands on: the
// model's JSON bytes as they came, a Struct as its JSON, the answer, the
// call id and the session from the metadata; a request without a name is
// INVALID_ARGUMENT before the core sees it.
func TestCallFromRequest(t *testing.T) {
	t.Parallel()
	withSession := metadata.NewIncomingContext(context.Background(), metadata.Pairs(SessionMetadata, "proj-1"))
	for _, tc := range []struct {
		name string
		ctx  context.Context
		req  *pb.ExecuteRequest
		want core.Call
		code codes.Code
	}{
		{name: "no name", req: &pb.ExecuteRequest{}, code: codes.InvalidArgument},
		{name: "json arguments", req: &pb.ExecuteRequest{Name: "t", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{"a":1}`}, CallId: "c1"},
			want: core.Call{Name: "t", Arguments: []byte(`{"a":1}`), Protocol: core.ProtocolGRPC, CallID: "c1"}},
		{name: "empty json arguments", req: &pb.ExecuteRequest{Name: "t", Input: &pb.ExecuteRequest_ArgumentsJson{}},
			want: core.Call{Name: "t", Protocol: core.ProtocolGRPC}},
		{name: "struct arguments", req: &pb.ExecuteRequest{Name: "t", Input: &pb.ExecuteRequest_Arguments{Arguments: mustStruct(t, map[string]any{"b": "x"})}},
			want: core.Call{Name: "t", Arguments: []byte(`{"b":"x"}`), Protocol: core.ProtocolGRPC}},
		{name: "session", ctx: withSession, req: &pb.ExecuteRequest{Name: "t"},
			want: core.Call{Name: "t", Protocol: core.ProtocolGRPC, Session: "proj-1"}},
		{name: "answer", req: &pb.ExecuteRequest{Name: "t", Answer: &pb.Answer{Id: "p1", Ok: true, Data: structpb.NewStructValue(mustStruct(t, map[string]any{"v": 1.0})), Reason: "r"}},
			want: core.Call{Name: "t", Protocol: core.ProtocolGRPC, Answer: &tool.Answer{ID: "p1", OK: true, Data: map[string]any{"v": 1.0}, Reason: "r"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := tc.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			got, err := callFromRequest(ctx, tc.req)
			if status.Code(err) != tc.code {
				t.Fatalf("error %v, want code %s", err, tc.code)
			}
			if err != nil {
				return
			}
			if got.Name != tc.want.Name || string(got.Arguments) != string(tc.want.Arguments) || got.Protocol != tc.want.Protocol ||
				got.CallID != tc.want.CallID || got.Session != tc.want.Session || got.Caller != nil {
				t.Errorf("call %+v, want %+v", got, tc.want)
			}
			if (got.Answer == nil) != (tc.want.Answer == nil) || got.Answer != nil && (got.Answer.ID != tc.want.Answer.ID ||
				got.Answer.OK != tc.want.Answer.OK || got.Answer.Reason != tc.want.Answer.Reason || got.Answer.Data.(map[string]any)["v"] != 1.0) {
				t.Errorf("answer %+v, want %+v", got.Answer, tc.want.Answer)
			}
		})
	}
}

// A tool's events become stream messages; a kind the wire has no message
// for is dropped, not sent empty.
func TestEventToProto(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   tool.Event
		want *pb.ExecuteEvent
	}{
		{"progress", tool.Event{Kind: tool.EventProgress, Progress: 1, Total: 4, Message: "m"},
			&pb.ExecuteEvent{Event: &pb.ExecuteEvent_Progress{Progress: &pb.ProgressEvent{Progress: 1, Total: 4, Message: "m"}}}},
		{"log", tool.Event{Kind: tool.EventLog, Level: "info", Logger: "l", Data: map[string]any{"k": "v"}},
			&pb.ExecuteEvent{Event: &pb.ExecuteEvent_Log{Log: &pb.LogEvent{Level: "info", Logger: "l", Data: structpb.NewStructValue(mustStruct(t, map[string]any{"k": "v"}))}}}},
		{"log of a typed value", tool.Event{Kind: tool.EventLog, Level: "debug", Data: []int{1, 2}},
			&pb.ExecuteEvent{Event: &pb.ExecuteEvent_Log{Log: &pb.LogEvent{Level: "debug", Data: structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{structpb.NewNumberValue(1), structpb.NewNumberValue(2)}})}}}},
		{"stdout", tool.Event{Kind: tool.EventOutput, Stream: tool.Stdout, Bytes: []byte("o")},
			&pb.ExecuteEvent{Event: &pb.ExecuteEvent_Output{Output: &pb.OutputEvent{Stream: pb.OutputStream_OUTPUT_STREAM_STDOUT, Data: []byte("o")}}}},
		{"stderr", tool.Event{Kind: tool.EventOutput, Stream: tool.Stderr, Bytes: []byte("e")},
			&pb.ExecuteEvent{Event: &pb.ExecuteEvent_Output{Output: &pb.OutputEvent{Stream: pb.OutputStream_OUTPUT_STREAM_STDERR, Data: []byte("e")}}}},
		{"unknown kind", tool.Event{Kind: 99}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := eventToProto(tc.in)
			if tc.want == nil {
				if got != nil {
					t.Errorf("got %v, want nothing", got)
				}
				return
			}
			if !proto.Equal(got, tc.want) {
				t.Errorf("eventToProto:\n got %v\nwant %v", got, tc.want)
			}
		})
	}
}

// The page token is opaque to clients but must round-trip, and a forged
// one is refused.
func TestPageToken(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"a", "debug_echo", "ü/x y"} {
		got, err := decodePageToken(encodePageToken(name))
		if err != nil || got != name {
			t.Errorf("round trip of %q: %q, %v", name, got, err)
		}
	}
	if _, err := decodePageToken("%%%not-base64"); err == nil {
		t.Error("a forged page token was accepted")
	}
}
