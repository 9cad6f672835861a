package grpcapi

import (
	"context"
	"strings"
	"testing"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

// BenchmarkCallFromRequest is the decoding of an ExecuteRequest into a core
// call, the arguments copied out of the request: a model's small call and a
// 16 KiB one (a file to write). Budget: the copy adds at most one
// allocation and the arguments' size in bytes per call.
func BenchmarkCallFromRequest(b *testing.B) {
	for _, tc := range []struct {
		name string
		args string
	}{
		{"small", `{"message":"hello"}`},
		{"16KiB", `{"path":"a.txt","content":"` + strings.Repeat("x", 16<<10) + `"}`},
	} {
		req := &pb.ExecuteRequest{Name: "debug_echo", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: tc.args}}
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := callFromRequest(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestCallFromRequestCopiesArguments shows the arguments a tool receives do
// not share memory with the request: writing to them leaves the request's
// string as it was.
func TestCallFromRequestCopiesArguments(t *testing.T) {
	t.Parallel()
	const args = `{"message":"hello"}`
	req := &pb.ExecuteRequest{Name: "debug_echo", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: args}}
	call, err := callFromRequest(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if string(call.Arguments) != args {
		t.Fatalf("arguments = %s, want %s", call.Arguments, args)
	}
	for i := range call.Arguments {
		call.Arguments[i] = 'X'
	}
	if got := req.GetArgumentsJson(); got != args {
		t.Fatalf("writing to the call's arguments changed the request: %q", got)
	}
}
