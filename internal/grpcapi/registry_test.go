package grpcapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/inproc"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

func TestListToolsSortedInByteOrderAndFiltered(t *testing.T) {
	t.Parallel()
	f := inproc.Serve(t, inproc.DebugOnly, inproc.Echo("b"), inproc.Echo("B"), inproc.Echo("_x"), inproc.Echo("a-b"), inproc.Echo("a"))
	resp, err := f.Registry.ListTools(context.Background(), &pb.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range resp.GetTools() {
		names = append(names, tl.GetName())
	}
	want := []string{"B", "_x", "a", "a-b", "b", "debug_echo", "debug_fail", "debug_panic", "debug_sleep"}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("names = %v, want byte order %v", names, want)
	}
	if resp.GetRevision() == 0 {
		t.Error("revision not set")
	}

	resp, err = f.Registry.ListTools(context.Background(), &pb.ListToolsRequest{Sources: []string{"debug"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetTools()) != 4 {
		t.Fatalf("source filter: got %d tools, want the 4 debug tools", len(resp.GetTools()))
	}
	for _, tl := range resp.GetTools() {
		if tl.GetSource() != "debug" {
			t.Errorf("tool %s has source %s", tl.GetName(), tl.GetSource())
		}
	}
	resp, err = f.Registry.ListTools(context.Background(), &pb.ListToolsRequest{Sources: []string{"no-such-source"}})
	if err != nil || len(resp.GetTools()) != 0 {
		t.Fatalf("unknown source: %v, %d tools; want an empty list", err, len(resp.GetTools()))
	}
	resp, err = f.Registry.ListTools(context.Background(), &pb.ListToolsRequest{Names: []string{"a", "debug_fail", "zzz"}})
	if err != nil || len(resp.GetTools()) != 2 {
		t.Fatalf("names filter: %v, %d tools; want 2", err, len(resp.GetTools()))
	}
}

func TestListToolsPagingAt10000Tools(t *testing.T) {
	t.Parallel()
	f := inproc.Serve(t, `{"builtins": false, "skills": []}`)
	tools := make([]tool.Tool, 10000)
	for i := range tools {
		tools[i] = inproc.Echo(fmt.Sprintf("t%05d", i))
	}
	if err := f.Core.Registry().Replace(registry.LayerID{Kind: sources.KindNative, Name: "bulk"}, tools); err != nil {
		t.Fatal(err)
	}
	var got []string
	token := ""
	pages := 0
	for {
		resp, err := f.Registry.ListTools(context.Background(), &pb.ListToolsRequest{PageSize: 3000, PageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, tl := range resp.GetTools() {
			got = append(got, tl.GetName())
		}
		token = resp.GetNextPageToken()
		if token == "" {
			break
		}
	}
	if pages != 4 || len(got) != 10000 {
		t.Fatalf("pages = %d, tools = %d; want 4 pages, 10000 tools", pages, len(got))
	}
	if !sort.StringsAreSorted(got) || got[0] != "t00000" || got[9999] != "t09999" {
		t.Fatalf("paged list not sorted/complete: first %s last %s", got[0], got[9999])
	}
	// Default page size is 1000; above the max of 10000 is capped.
	resp, err := f.Registry.ListTools(context.Background(), &pb.ListToolsRequest{})
	if err != nil || len(resp.GetTools()) != 1000 || resp.GetNextPageToken() == "" {
		t.Fatalf("default page: %v, %d tools", err, len(resp.GetTools()))
	}
	resp, err = f.Registry.ListTools(context.Background(), &pb.ListToolsRequest{PageSize: 50000})
	if err != nil || len(resp.GetTools()) != 10000 || resp.GetNextPageToken() != "" {
		t.Fatalf("capped page: %v, %d tools, token %q", err, len(resp.GetTools()), resp.GetNextPageToken())
	}
	_, err = f.Registry.ListTools(context.Background(), &pb.ListToolsRequest{PageToken: "garbage!"})
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("bad token: %v, want InvalidArgument", err)
	}
}

func TestLaterLayerWinsAndShadowIsReported(t *testing.T) {
	t.Parallel()
	// A native tool named like a debug tool: native (later) must win.
	mine := tool.Must(tool.Native("debug_echo", func(context.Context, map[string]any) (any, error) { return "native wins", nil }))
	f := inproc.Serve(t, inproc.DebugOnly, mine)
	res := f.Execute(t, context.Background(), "debug_echo", `{"x":1}`)
	if res.GetOutput() != "native wins" {
		t.Fatalf("debug_echo output %q: the native layer should shadow the debug layer", res.GetOutput())
	}
	tl, err := f.Registry.GetTool(context.Background(), &pb.GetToolRequest{Name: "debug_echo"})
	if err != nil || tl.GetTool().GetSource() != "custom" {
		t.Fatalf("GetTool: %v source %q, want custom", err, tl.GetTool().GetSource())
	}
	srcs, err := f.Sources.ListSources(context.Background(), &pb.ListSourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, s := range srcs.GetSources() {
		if s.GetKind() == "debug" {
			found = true
			if strings.Join(s.GetShadowed(), ",") != "debug_echo" || s.GetToolCount() != 4 || s.GetStatus() != "connected" {
				t.Fatalf("debug source = %v; want 4 tools, connected, shadowed [debug_echo]", s)
			}
		}
	}
	if !found {
		t.Fatal("ListSources has no debug source")
	}
}

func TestExecuteNativeStructAndJSONAgree(t *testing.T) {
	t.Parallel()
	add := tool.Must(tool.Typed("add", func(_ context.Context, a struct {
		A int `json:"a"`
		B int `json:"b"`
	}) (any, error) {
		return map[string]int{"sum": a.A + a.B}, nil
	}))
	f := inproc.Serve(t, inproc.DebugOnly, add)
	byJSON := f.Execute(t, context.Background(), "add", `{"a": 2, "b": 40}`)
	resp, err := f.Registry.Execute(context.Background(), &pb.ExecuteRequest{Name: "add",
		Input: &pb.ExecuteRequest_Arguments{Arguments: inproc.Struct(t, map[string]any{"a": 2, "b": 40})}})
	if err != nil {
		t.Fatal(err)
	}
	byStruct := resp.GetResult()
	if byJSON.GetIsError() || byJSON.GetOutput() != `{"sum":42}` || byJSON.GetOutcome() != pb.Outcome_OUTCOME_OK {
		t.Fatalf("by JSON: %v", byJSON)
	}
	if byStruct.GetOutput() != byJSON.GetOutput() || byStruct.GetIsError() {
		t.Fatalf("by Struct %q differs from by JSON %q", byStruct.GetOutput(), byJSON.GetOutput())
	}
	// arguments_json is passed verbatim: big integers keep every digit.
	echo := f.Execute(t, context.Background(), "debug_echo", `{"n": 12345678901234567890}`)
	if echo.GetOutput() != `{"n":12345678901234567890}` {
		t.Fatalf("arguments_json re-encoded: %s", echo.GetOutput())
	}
}

func TestExecuteFailuresAreResults(t *testing.T) {
	t.Parallel()
	f := inproc.Serve(t, inproc.DebugOnly)
	cases := []struct {
		name, args string
		outcome    pb.Outcome
		output     string
	}{
		{"nope", `{}`, pb.Outcome_OUTCOME_UNKNOWN_TOOL, "unknown tool: nope"},
		{"debug_fail", `{"message":"it broke"}`, pb.Outcome_OUTCOME_TOOL_ERROR, "it broke"},
		{"debug_panic", `{"message":"kaboom"}`, pb.Outcome_OUTCOME_PANIC, "kaboom"},
		{"debug_echo", `[1,2]`, pb.Outcome_OUTCOME_INVALID_ARGUMENTS, "invalid arguments for debug_echo: the arguments must be a JSON object, e.g. {}"},
		{"debug_echo", `{"a":`, pb.Outcome_OUTCOME_INVALID_ARGUMENTS, "invalid arguments for debug_echo: the arguments must be a JSON object, e.g. {}"},
	}
	for _, c := range cases {
		res := f.Execute(t, context.Background(), c.name, c.args)
		if !res.GetIsError() || res.GetOutcome() != c.outcome || res.GetOutput() != c.output {
			t.Errorf("%s %s = {%q, is_error=%v, %v}; want {%q, true, %v}", c.name, c.args, res.GetOutput(), res.GetIsError(), res.GetOutcome(), c.output, c.outcome)
		}
	}
	// The server still serves after the panic.
	if res := f.Execute(t, context.Background(), "debug_echo", `{"ok":true}`); res.GetIsError() || res.GetOutput() != `{"ok":true}` {
		t.Fatalf("after panic: %v", res)
	}
	_, err := f.Registry.Execute(context.Background(), &pb.ExecuteRequest{})
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("empty name: %v, want InvalidArgument", err)
	}

	body := f.Scrape(t)
	for _, want := range [][]string{
		{`source="debug"`, `tool="debug_panic"`, `outcome="panic"`},
		{`source="debug"`, `tool="debug_fail"`, `outcome="tool_error"`},
		{`source="unknown"`, `tool="unknown"`, `outcome="unknown_tool"`},
		{`source="debug"`, `tool="debug_echo"`, `outcome="ok"`},
		{`source="debug"`, `tool="debug_echo"`, `outcome="invalid_arguments"`},
	} {
		line := testutil.MetricLine(body, "toolnexus_tool_calls_total", want...)
		if line == "" || !strings.HasSuffix(line, " 1") && !strings.HasSuffix(line, " 2") {
			t.Errorf("no toolnexus_tool_calls_total sample with %v (got %q)", want, line)
		}
	}
	for _, name := range []string{"toolnexus_tool_call_duration_seconds_bucket", "toolnexus_tool_calls_in_flight", "toolnexus_tools", "toolnexus_source_up", "toolnexus_registry_revision", "grpc_server_handled_total"} {
		if !strings.Contains(body, name) {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	if line := testutil.MetricLine(body, "toolnexus_tools", `source="debug"`); !strings.HasSuffix(line, " 4") {
		t.Errorf("toolnexus_tools{source=debug} = %q, want 4", line)
	}
}

func TestCallerDeadlineReachesTheTool(t *testing.T) {
	t.Parallel()
	stopped := make(chan error, 1)
	block := tool.Must(tool.New("block", func(ctx context.Context, _ tool.Call) tool.Result {
		<-ctx.Done()
		stopped <- ctx.Err()
		return tool.ContextResult(ctx, "block")
	}))
	f := inproc.Serve(t, inproc.DebugOnly, block)
	// The connection is up before the deadline starts: on a busy machine
	// dialing alone can outlast it, and the call would then never leave
	// the client.
	if res := f.Execute(t, context.Background(), "debug_echo", `{}`); res.GetIsError() {
		t.Fatal(res)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := f.Registry.Execute(ctx, &pb.ExecuteRequest{Name: "block"})
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("err = %v, want DeadlineExceeded", err)
	}
	select {
	case err := <-stopped:
		if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
			t.Fatalf("tool saw %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the tool never saw the caller's deadline")
	}
}

func TestLimitTimeoutIsAResult(t *testing.T) {
	t.Parallel()
	f := inproc.Serve(t, `{"debug": true, "builtins": false, "skills": [], "limits": {"tools": {"debug_sleep": {"timeout": 50}}}}`)
	res := f.Execute(t, context.Background(), "debug_sleep", `{"ms": 60000}`)
	if !res.GetIsError() || res.GetOutcome() != pb.Outcome_OUTCOME_TIMEOUT || res.GetOutput() != "debug_sleep: timed out after 50ms (limits.timeout)" {
		t.Fatalf("got %v", res)
	}
}

func TestWatchToolsSeesLayerReplace(t *testing.T) {
	t.Parallel()
	f := inproc.Serve(t, inproc.DebugOnly)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream, err := f.Registry.WatchTools(ctx, &pb.WatchToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	first, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if !first.GetSnapshot() || len(first.GetTools()) != 4 {
		t.Fatalf("first message: snapshot=%v tools=%d", first.GetSnapshot(), len(first.GetTools()))
	}
	id := registry.LayerID{Kind: sources.KindNative, Name: "late"}
	if err := f.Core.Registry().Replace(id, []tool.Tool{inproc.Echo("late_a")}); err != nil {
		t.Fatal(err)
	}
	if err := f.Core.Registry().Replace(id, []tool.Tool{inproc.Echo("late_b")}); err != nil {
		t.Fatal(err)
	}
	m1, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	m2, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if m1.GetRevision() != first.GetRevision()+1 || m2.GetRevision() != first.GetRevision()+2 {
		t.Fatalf("revisions %d, %d after %d; want consecutive", m1.GetRevision(), m2.GetRevision(), first.GetRevision())
	}
	if strings.Join(m1.GetAdded(), ",") != "late_a" || len(m1.GetTools()) != 5 {
		t.Fatalf("m1 = added %v, %d tools", m1.GetAdded(), len(m1.GetTools()))
	}
	if strings.Join(m2.GetAdded(), ",") != "late_b" || strings.Join(m2.GetRemoved(), ",") != "late_a" {
		t.Fatalf("m2 = added %v removed %v", m2.GetAdded(), m2.GetRemoved())
	}
}

func TestExportToolsShapes(t *testing.T) {
	t.Parallel()
	f := inproc.Serve(t, inproc.DebugOnly)
	get := func(format pb.ExportFormat) []map[string]any {
		resp, err := f.Registry.ExportTools(context.Background(), &pb.ExportToolsRequest{Format: format, Names: []string{"debug_sleep"}})
		if err != nil {
			t.Fatal(err)
		}
		var out []map[string]any
		if err := json.Unmarshal([]byte(resp.GetJson()), &out); err != nil {
			t.Fatalf("%v: not JSON: %v", format, err)
		}
		return out
	}
	oa := get(pb.ExportFormat_EXPORT_FORMAT_OPENAI)
	fn := oa[0]["function"].(map[string]any)
	if len(oa) != 1 || oa[0]["type"] != "function" || fn["name"] != "debug_sleep" || fn["parameters"].(map[string]any)["required"].([]any)[0] != "ms" {
		t.Fatalf("openai: %v", oa)
	}
	an := get(pb.ExportFormat_EXPORT_FORMAT_ANTHROPIC)
	if an[0]["name"] != "debug_sleep" || an[0]["input_schema"].(map[string]any)["type"] != "object" || an[0]["description"] == "" {
		t.Fatalf("anthropic: %v", an)
	}
	ge := get(pb.ExportFormat_EXPORT_FORMAT_GEMINI)
	decls := ge[0]["functionDeclarations"].([]any)
	if len(ge) != 1 || len(decls) != 1 || decls[0].(map[string]any)["name"] != "debug_sleep" {
		t.Fatalf("gemini: %v", ge)
	}
	_, err := f.Registry.ExportTools(context.Background(), &pb.ExportToolsRequest{})
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("unspecified format: %v", err)
	}
}
func TestConcurrentExecuteWhileLayersAreReplaced(t *testing.T) {
	t.Parallel()
	// Each version of layer "flux" has 8 tools all answering with the same
	// version tag; a call must never see a mix, and the stable tool must
	// never fail.
	const perLayer = 8
	f := inproc.Serve(t, inproc.DebugOnly)
	id := registry.LayerID{Kind: sources.KindNative, Name: "flux"}
	version := func(v int) []tool.Tool {
		out := make([]tool.Tool, perLayer)
		for i := range out {
			out[i] = tool.Must(tool.Native(fmt.Sprintf("flux_%d", i), func(context.Context, map[string]any) (any, error) {
				return fmt.Sprintf("v%d", v), nil
			}))
		}
		if v%2 == 0 {
			out = append(out, inproc.Echo(fmt.Sprintf("only_even_%d", v)))
		}
		return out
	}
	if err := f.Core.Registry().Replace(id, version(0)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var calls, failures atomic.Int64
	var wg sync.WaitGroup
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				name := fmt.Sprintf("flux_%d", (g+i)%perLayer)
				if i%4 == 0 {
					name = "debug_echo"
				}
				resp, err := f.Registry.Execute(context.Background(), &pb.ExecuteRequest{Name: name, Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{}`}})
				calls.Add(1)
				if err != nil || resp.GetResult().GetIsError() {
					failures.Add(1)
					t.Errorf("%s failed: %v %v", name, err, resp.GetResult())
					return
				}
			}
		}()
	}
	// Keep replacing until the callers have made plenty of calls across
	// many versions.
	for v := 1; v <= 200 || calls.Load() < 5000; v++ {
		if err := f.Core.Registry().Replace(id, version(v)); err != nil {
			t.Fatal(err)
		}
		snap := f.Core.Registry().Snapshot()
		tag := ""
		for i := 0; i < perLayer; i++ {
			e, ok := snap.Lookup(fmt.Sprintf("flux_%d", i))
			if !ok {
				t.Fatalf("snapshot %d misses flux_%d", snap.Revision(), i)
			}
			out := e.Tool.Execute(context.Background(), tool.Call{}).Output
			if tag == "" {
				tag = out
			} else if out != tag {
				t.Fatalf("snapshot %d mixes versions %s and %s", snap.Revision(), tag, out)
			}
		}
	}
	cancel()
	wg.Wait()
	if calls.Load() == 0 || failures.Load() != 0 {
		t.Fatalf("calls=%d failures=%d", calls.Load(), failures.Load())
	}
}
