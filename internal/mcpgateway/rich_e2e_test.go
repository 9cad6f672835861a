package mcpgateway_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/inproc"
)

// The rich server's media, as e2e/node/rich-server.mjs encodes them.
const (
	richPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
	richWAV = "RIFF$\x00\x00\x00WAVEfmt "
)

// richServer finds node and e2e/node/rich-server.mjs (the official
// TypeScript MCP SDK) and returns node, the e2e/node directory and a config
// serving it as MCP server "rich"; it skips when they are missing, unless
// TOOLNEXUS_REQUIRE_E2E=1.
func richServer(t *testing.T) (node, nodeDir, cfg string) {
	t.Helper()
	node, nodeDir = testutil.NodeE2E(t)
	b, _ := json.Marshal(map[string]any{"debug": false, "builtins": false, "skills": []any{},
		"mcpServers": map[string]any{"rich": map[string]any{"command": []string{node, filepath.Join(nodeDir, "rich-server.mjs")}}}})
	return node, nodeDir, string(b)
}

func mustB64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Through gRPC ExecuteStream: every content kind the TypeScript server
// returns, its progress and log notifications before the result, its
// error, and a cancel that reaches it.
func TestRichTypeScriptServerOverExecuteStream(t *testing.T) {
	t.Parallel()
	_, _, cfg := richServer(t)
	f := inproc.Serve(t, cfg)
	ctx := context.Background()

	events, res := f.Stream(t, ctx, "rich_report", `{}`)
	var progress []float64
	var levels []string
	for _, ev := range events {
		switch {
		case ev.GetProgress() != nil:
			p := ev.GetProgress()
			progress = append(progress, p.GetProgress())
			if p.GetTotal() != 3 || !strings.HasPrefix(p.GetMessage(), "step ") {
				t.Errorf("progress %v", p)
			}
		case ev.GetLog() != nil:
			l := ev.GetLog()
			levels = append(levels, l.GetLevel())
			if l.GetLogger() != "report" || l.GetData().GetStructValue().GetFields()["step"] == nil {
				t.Errorf("log %v", l)
			}
		}
	}
	if len(progress) != 3 || progress[0] != 1 || progress[2] != 3 || strings.Join(levels, ",") != "info,info,warning" || res.GetOutput() != "reported" {
		t.Fatalf("report: progress %v logs %v result %v", progress, levels, res)
	}

	_, res = f.Stream(t, ctx, "rich_image", `{}`)
	if c := res.GetContent(); len(c) != 1 || c[0].GetImage().GetMimeType() != "image/png" || !bytes.Equal(c[0].GetImage().GetData(), mustB64(t, richPNG)) {
		t.Fatalf("image: %v", res)
	}
	_, res = f.Stream(t, ctx, "rich_audio", `{}`)
	if c := res.GetContent(); len(c) != 1 || c[0].GetAudio().GetMimeType() != "audio/wav" || string(c[0].GetAudio().GetData()) != richWAV {
		t.Fatalf("audio: %v", res)
	}
	_, res = f.Stream(t, ctx, "rich_resource", `{}`)
	if c := res.GetContent(); len(c) != 2 || c[0].GetResource().GetText() != "# Notes" || c[0].GetResource().GetUri() != "file:///notes.md" ||
		!bytes.Equal(c[1].GetResource().GetBlob(), []byte{0, 1, 2, 255}) || c[1].GetResource().GetMimeType() != "application/octet-stream" {
		t.Fatalf("resource: %v", res)
	}
	_, res = f.Stream(t, ctx, "rich_mixed", `{}`)
	if c := res.GetContent(); res.GetOutput() != "here is the chart" || len(c) != 4 ||
		c[0].GetText().GetText() != "here is the chart" || c[1].GetImage() == nil ||
		c[2].GetResource().GetUri() != "file:///chart.csv" || c[2].GetResource().GetContents() != nil ||
		c[3].GetResource().GetText() != "chart notes" {
		t.Fatalf("mixed: %v", res)
	}
	// Unary Execute carries the same parts.
	if r := f.Execute(t, context.Background(), "rich_mixed", `{}`); len(r.GetContent()) != 4 {
		t.Fatalf("unary mixed: %v", r)
	}
	_, res = f.Stream(t, ctx, "rich_fail", `{}`)
	if !res.GetIsError() || res.GetOutcome() != pb.Outcome_OUTCOME_TOOL_ERROR || res.GetOutput() != "the rich server failed on purpose" {
		t.Fatalf("fail: %v", res)
	}

	// Cancel mid-stream: the server sees notifications/cancelled.
	cctx, cancel := context.WithCancel(ctx)
	s, err := f.Registry.ExecuteStream(cctx, &pb.ExecuteRequest{Name: "rich_slow"})
	if err != nil {
		t.Fatal(err)
	}
	f.WaitInFlight(t, "mcp")
	cancel()
	if _, err := s.Recv(); status.Code(err) != codes.Canceled {
		t.Fatalf("after cancel: %v", err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for f.Execute(t, context.Background(), "rich_cancelled", `{}`).GetOutput() != "1" {
		if time.Now().After(deadline) {
			t.Fatal("the TypeScript server never saw the cancellation")
		}
	}
}

// Through /mcp with the official TypeScript client: a call with a progress
// token gets the three progress notifications, the log messages at the
// level the client set, then the result — in that order.
func TestRichTypeScriptServerThroughTheGatewayWithTheTypeScriptClient(t *testing.T) {
	t.Parallel()
	node, nodeDir, cfg := richServer(t)
	g := inproc.Serve(t, cfg)
	type event struct {
		Progress *struct {
			Progress, Total float64
			Message         string
		} `json:"progress"`
		Log *struct {
			Level, Logger string
			Data          map[string]any
		} `json:"log"`
		Result *struct {
			IsError bool             `json:"isError"`
			Content []map[string]any `json:"content"`
		} `json:"result"`
	}
	run := func(level string, tools ...string) map[string][]event {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join("testdata", "mcp-stream-client.mjs"), nodeDir, g.MCPURL, level}, tools...)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("node client: %v\nstderr:\n%s", err, stderr.String())
		}
		var out struct {
			Calls []struct {
				Tool   string
				Events []event
			}
		}
		if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
			t.Fatalf("stdout %q: %v", stdout.String(), err)
		}
		byTool := map[string][]event{}
		for _, c := range out.Calls {
			byTool[c.Tool] = c.Events
		}
		return byTool
	}
	shape := func(evs []event) string {
		var s []string
		for _, e := range evs {
			switch {
			case e.Progress != nil:
				s = append(s, "progress")
			case e.Log != nil:
				s = append(s, "log:"+e.Log.Level)
			case e.Result != nil:
				s = append(s, "result")
			}
		}
		return strings.Join(s, ",")
	}

	calls := run("info", "rich_report", "rich_mixed", "rich_fail")
	report := calls["rich_report"]
	// Progress and logs interleave as the server sent them; the result is last.
	if got := shape(report); got != "progress,log:info,progress,log:info,progress,log:warning,result" {
		t.Fatalf("report events: %s", got)
	}
	if p := report[4].Progress; p.Progress != 3 || p.Total != 3 || p.Message != "step 3" {
		t.Fatalf("last progress: %+v", p)
	}
	if l := report[5].Log; l.Logger != "report" || l.Data["step"] != float64(3) {
		t.Fatalf("last log: %+v", l)
	}
	mixed := calls["rich_mixed"]
	if len(mixed) != 1 || len(mixed[0].Result.Content) != 4 {
		t.Fatalf("mixed: %+v", mixed)
	}
	kinds := []string{}
	for _, c := range mixed[0].Result.Content {
		kinds = append(kinds, c["type"].(string))
	}
	if strings.Join(kinds, ",") != "text,image,resource_link,resource" || mixed[0].Result.Content[1]["data"] != richPNG {
		t.Fatalf("mixed content: %v", mixed[0].Result.Content)
	}
	if fail := calls["rich_fail"]; len(fail) != 1 || !fail[0].Result.IsError {
		t.Fatalf("fail: %+v", fail)
	}

	// At warning only the warning passes.
	if got := shape(run("warning", "rich_report")["rich_report"]); got != "progress,progress,progress,log:warning,result" {
		t.Fatalf("report at warning: %s", got)
	}
}
