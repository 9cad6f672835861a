package inproc

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/structpb"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
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

// ServeAuth serves testutil.AuthConfig (its tokens set in the
// environment, so the test cannot be parallel) with the native tools
// mine_a and other; every log line, at debug level, goes to logs when it
// is not nil.
func ServeAuth(t testing.TB, logs io.Writer) *Rig {
	t.Helper()
	testutil.SetAuthEnv(t)
	opts := Options{Native: []tool.Tool{Echo("mine_a"), Echo("other")}}
	if logs != nil {
		opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return Start(t, testutil.AuthConfig, opts)
}

// ToolNames are the tools' names, comma-separated, in their order.
func ToolNames(tools []*pb.Tool) string {
	out := make([]string, len(tools))
	for i, tl := range tools {
		out[i] = tl.GetName()
	}
	return strings.Join(out, ",")
}

// ScoredNames are a search's hits by name, comma-separated, best first.
func ScoredNames(resp *pb.SearchToolsResponse) string {
	out := make([]string, len(resp.GetTools()))
	for i, h := range resp.GetTools() {
		out[i] = h.GetTool().GetName()
	}
	return strings.Join(out, ",")
}

// CodeModeTools are code mode's test tools: cm_add (two numbers' sum),
// cm_upper (a text upper-cased, with a schema), cm_len (a text's length)
// and cm_secret (what a policy forbids).
func CodeModeTools() []tool.Tool {
	add := tool.Must(tool.Native("cm_add", func(_ context.Context, a map[string]any) (any, error) {
		x, _ := a["a"].(float64)
		y, _ := a["b"].(float64)
		return map[string]any{"sum": x + y}, nil
	}, tool.WithDescription("Add two numbers.")))
	upper := tool.Must(tool.Native("cm_upper", func(_ context.Context, a map[string]any) (any, error) {
		s, _ := a["text"].(string)
		return strings.ToUpper(s), nil
	}, tool.WithDescription("Upper-case a text."), tool.WithInputSchema([]byte(`{"type":"object","properties":{"text":{"type":"string","description":"the text"}},"required":["text"]}`))))
	length := tool.Must(tool.Native("cm_len", func(_ context.Context, a map[string]any) (any, error) {
		s, _ := a["text"].(string)
		return map[string]any{"length": len(s), "text": s}, nil
	}, tool.WithDescription("Measure a text.")))
	secret := tool.Must(tool.Native("cm_secret", func(context.Context, map[string]any) (any, error) {
		return "the secret", nil
	}, tool.WithDescription("Read the secret.")))
	return []tool.Tool{add, upper, length, secret}
}
