package tool_test

import (
	"context"
	"reflect"
	"sync"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

func TestEventsReachTheSink(t *testing.T) {
	var mu sync.Mutex
	var got []tool.Event
	ctx := tool.WithEvents(context.Background(), func(e tool.Event) {
		mu.Lock()
		defer mu.Unlock()
		if e.Bytes != nil {
			e.Bytes = append([]byte(nil), e.Bytes...)
		}
		got = append(got, e)
	})
	if !tool.Streaming(ctx) {
		t.Fatal("Streaming = false with a sink")
	}
	tool.Progress(ctx, 1, 3, "one")
	tool.Log(ctx, tool.LevelWarning, "db", map[string]any{"slow": true})
	tool.Output(ctx, tool.Stderr, []byte("oops\n"))
	tool.Output(ctx, tool.Stdout, nil) // nothing to say: no event
	want := []tool.Event{
		{Kind: tool.EventProgress, Progress: 1, Total: 3, Message: "one"},
		{Kind: tool.EventLog, Level: "warning", Logger: "db", Data: map[string]any{"slow": true}},
		{Kind: tool.EventOutput, Stream: tool.Stderr, Bytes: []byte("oops\n")},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("events:\n got %+v\nwant %+v", got, want)
	}
}

func TestEventsWithoutSinkAreNoOps(t *testing.T) {
	ctx := context.Background()
	if tool.Streaming(ctx) || tool.Streaming(tool.WithEvents(ctx, nil)) {
		t.Fatal("Streaming = true without a sink")
	}
	data := []byte("data")
	allocs := testing.AllocsPerRun(100, func() {
		tool.Progress(ctx, 1, 2, "x")
		tool.Log(ctx, tool.LevelInfo, "l", "message")
		tool.Output(ctx, tool.Stdout, data)
	})
	if allocs != 0 {
		t.Fatalf("reporting without a sink allocated %v times per call", allocs)
	}
}

func TestRichTextView(t *testing.T) {
	png := []byte{0x89, 'P', 'N', 'G'}
	r := tool.Rich(tool.Text("a"), tool.Image("image/png", png), tool.Text("b"), tool.TextResource("file:///r.md", "text/markdown", "# r"))
	if r.Output != "a\nb" || r.IsError || len(r.Content) != 4 {
		t.Fatalf("Rich: %+v", r)
	}
	if r.Content[1].Kind != tool.ContentImage || r.Content[1].Kind.String() != "image" || r.Content[1].Size() != 4 {
		t.Fatalf("image part: %+v", r.Content[1])
	}
	if got := tool.ContentSize(r.Content); got != 1+4+1+3 {
		t.Fatalf("ContentSize = %d", got)
	}
	f := tool.RichFailure(tool.Audio("audio/wav", []byte("RIFF")))
	if !f.IsError || f.Output != "" || f.Resolved() != tool.OutcomeToolError {
		t.Fatalf("RichFailure: %+v", f)
	}
	b := tool.BlobResource("file:///x.bin", "application/octet-stream", []byte{0, 1})
	if !b.Blob || b.Kind != tool.ContentResource {
		t.Fatalf("BlobResource: %+v", b)
	}
}

// BenchmarkEventsNoSink is what reporting costs a tool nobody streams:
// one context lookup per report, no allocation.
func BenchmarkEventsNoSink(b *testing.B) {
	ctx := context.WithValue(context.Background(), struct{ k int }{1}, "other value")
	data := []byte("a line of output\n")
	b.ReportAllocs()
	for b.Loop() {
		tool.Progress(ctx, 1, 10, "step")
		tool.Log(ctx, tool.LevelInfo, "bench", "message")
		tool.Output(ctx, tool.Stdout, data)
	}
}

// BenchmarkEventsSink is the same with a sink attached that drops events.
func BenchmarkEventsSink(b *testing.B) {
	n := 0
	ctx := tool.WithEvents(context.Background(), func(tool.Event) { n++ })
	data := []byte("a line of output\n")
	b.ReportAllocs()
	for b.Loop() {
		tool.Progress(ctx, 1, 10, "step")
		tool.Log(ctx, tool.LevelInfo, "bench", "message")
		tool.Output(ctx, tool.Stdout, data)
	}
}
