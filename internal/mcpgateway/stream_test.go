package mcpgateway_test

//lint:file-ignore SA1019 the test drives MCP logging, deprecated upstream but what the gateway relays.

import (
	"bytes"
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/toolnexus/toolnexus/internal/testutil/inproc"
	"github.com/toolnexus/toolnexus/internal/testutil/mcpclient"
)

// mcpEvents collects a go-sdk client's progress and log notifications.
type mcpEvents struct {
	progress chan *mcp.ProgressNotificationParams
	logs     chan *mcp.LoggingMessageParams
}

func newMCPEvents() (*mcpEvents, *mcp.ClientOptions) {
	ev := &mcpEvents{progress: make(chan *mcp.ProgressNotificationParams, 16), logs: make(chan *mcp.LoggingMessageParams, 16)}
	return ev, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) { ev.progress <- r.Params },
		LoggingMessageHandler:       func(_ context.Context, r *mcp.LoggingMessageRequest) { ev.logs <- r.Params },
	}
}

func TestMCPGatewayRichContentProgressAndLogs(t *testing.T) {
	t.Parallel()
	g := inproc.Serve(t, inproc.DebugOnly, inproc.Reporter)
	ev, opts := newMCPEvents()
	cs := g.MustConnect(t, "", opts)

	// Without a progress token or a log level: the rich result, no events.
	res := mcpclient.Call(t, cs, "reporter", map[string]any{})
	if res.IsError || len(res.Content) != 6 {
		t.Fatalf("result: %+v", res)
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "done" {
		t.Fatalf("text part: %#v", res.Content[0])
	}
	if img, ok := res.Content[1].(*mcp.ImageContent); !ok || img.MIMEType != "image/png" || !bytes.Equal(img.Data, inproc.PNG) {
		t.Fatalf("image part: %#v", res.Content[1])
	}
	if au, ok := res.Content[2].(*mcp.AudioContent); !ok || string(au.Data) != "RIFF" {
		t.Fatalf("audio part: %#v", res.Content[2])
	}
	if er, ok := res.Content[3].(*mcp.EmbeddedResource); !ok || er.Resource.URI != "file:///r.md" || er.Resource.Text != "# r" {
		t.Fatalf("text resource: %#v", res.Content[3])
	}
	if er, ok := res.Content[4].(*mcp.EmbeddedResource); !ok || !bytes.Equal(er.Resource.Blob, []byte{0, 1}) {
		t.Fatalf("blob resource: %#v", res.Content[4])
	}
	if rl, ok := res.Content[5].(*mcp.ResourceLink); !ok || rl.URI != "file:///l" || rl.Name != "l" {
		t.Fatalf("resource link: %#v", res.Content[5])
	}
	if len(ev.progress)+len(ev.logs) != 0 {
		t.Fatal("events without a progress token or a log level")
	}

	// A progress token: three notifications/progress for that token.
	params := &mcp.CallToolParams{Name: "reporter", Arguments: map[string]any{}}
	params.SetProgressToken("tok-1")
	if _, err := cs.CallTool(context.Background(), params); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		p := <-ev.progress
		if p.ProgressToken != "tok-1" || p.Progress != float64(i) || p.Total != 3 || p.Message != "step" {
			t.Fatalf("progress %d: %+v", i, p)
		}
	}

	// logging/setLevel warning: the tool's warning arrives; its output
	// (info) does not.
	if err := cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "warning"}); err != nil {
		t.Fatal(err)
	}
	mcpclient.Call(t, cs, "reporter", map[string]any{})
	l := <-ev.logs
	if l.Level != "warning" || l.Logger != "rep" || l.Data.(map[string]any)["n"] != float64(1) {
		t.Fatalf("log: %+v", l)
	}
	// At debug the live output follows as stdout and stderr messages.
	if err := cs.SetLoggingLevel(context.Background(), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	mcpclient.Call(t, cs, "reporter", map[string]any{})
	got := map[string]any{}
	for range 3 {
		l := <-ev.logs
		got[l.Logger] = l.Data
	}
	if got["stdout"] != "out\n" || got["stderr"] != "err\n" || got["rep"] == nil {
		t.Fatalf("logs at debug: %v", got)
	}
	if len(ev.logs) != 0 {
		t.Fatalf("the warning-level call leaked an info message: %+v", <-ev.logs)
	}
}
