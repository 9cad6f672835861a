package inproc

import (
	"context"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// DebugOnly serves the four debug tools and nothing else.
const DebugOnly = `{"debug": true, "builtins": false, "skills": []}`

// Echo is a native tool that returns its arguments.
func Echo(name string) tool.Tool {
	return tool.Must(tool.Native(name, func(_ context.Context, args map[string]any) (any, error) {
		return args, nil
	}, tool.WithDescription("echo "+name)))
}

// PNG is the image Reporter returns.
var PNG = []byte{0x89, 'P', 'N', 'G', 0, 1, 2}

// Reporter is a native tool that reports one of each event — progress
// three times, a log message, stdout and stderr — and returns a rich
// result: text, an image (PNG), audio, a text and a blob resource and a
// resource link.
var Reporter = tool.Must(tool.New("reporter", func(ctx context.Context, _ tool.Call) tool.Result {
	for i := 1; i <= 3; i++ {
		tool.Progress(ctx, float64(i), 3, "step")
	}
	tool.Log(ctx, tool.LevelWarning, "rep", map[string]any{"n": 1})
	tool.Output(ctx, tool.Stdout, []byte("out\n"))
	tool.Output(ctx, tool.Stderr, []byte("err\n"))
	return tool.Rich(tool.Text("done"), tool.Image("image/png", PNG), tool.Audio("audio/wav", []byte("RIFF")),
		tool.TextResource("file:///r.md", "text/markdown", "# r"), tool.BlobResource("file:///b", "application/octet-stream", []byte{0, 1}),
		tool.ResourceLink("file:///l", "l", "text/plain"))
}))

// Struct is m as the protobuf Struct of an ExecuteRequest's arguments.
func Struct(t testing.TB, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
