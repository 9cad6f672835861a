package tool_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// BenchmarkTypedExecute is the per-call cost Typed adds: strict decoding
// into T and rendering the value. The schema is derived once, at build time.
func BenchmarkTypedExecute(b *testing.B) {
	type args struct {
		Name  string   `json:"name"`
		Times int      `json:"times,omitempty"`
		Tags  []string `json:"tags,omitempty"`
	}
	tl := tool.Must(tool.Typed("t", func(_ context.Context, a args) (any, error) { return a.Name, nil }))
	call := tool.Call{Arguments: json.RawMessage(`{"name":"ada","times":3,"tags":["x","y"]}`)}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if res := tl.Execute(ctx, call); res.Output != "ada" {
			b.Fatal(res.Output)
		}
	}
}

// BenchmarkNativeExecute is the same for an untyped function.
func BenchmarkNativeExecute(b *testing.B) {
	tl := tool.Must(tool.Native("n", func(_ context.Context, a map[string]any) (any, error) { return a["name"], nil }))
	call := tool.Call{Arguments: json.RawMessage(`{"name":"ada","times":3,"tags":["x","y"]}`)}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if res := tl.Execute(ctx, call); res.Output != "ada" {
			b.Fatal(res.Output)
		}
	}
}
