package mcpgateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/internal/mcpgateway"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/mcpclient"
)

// door is a gateway on loopback over a core that records every step each
// call enters.
type door struct {
	url   string
	steps *testutil.StepLog
}

func startDoor(t *testing.T, cfgJSON string, opts mcpgateway.Options) *door {
	t.Helper()
	dir := t.TempDir()
	cfg, err := config.Parse([]byte(cfgJSON), "", dir)
	if err != nil {
		t.Fatal(err)
	}
	steps := testutil.NewStepLog(core.StepObserve)
	log := slog.New(slog.DiscardHandler)
	c, err := core.New(cfg, core.Options{Logger: log, Native: scriptTools(), OnStep: func(_ context.Context, step string, call core.Call) {
		steps.Hear(call.Name, step)
	}})
	if err != nil {
		t.Fatal(err)
	}
	opts.Logger = log
	return &door{url: serveGateway(t, c, opts), steps: steps}
}

// connect is an MCP client session on path (/mcp, or a view's /mcp/NAME),
// sending these headers with every request.
func (d *door) connect(t *testing.T, path string, header ...string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "doors", Version: "0"}, nil)
	hc := mcpclient.HeaderClient(header...)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: d.url + path, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// call is a tools/call: its result, or the JSON-RPC error's message.
func call(t *testing.T, cs *mcp.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	var werr *jsonrpc.Error
	if errors.As(err, &werr) {
		return "error " + werr.Message, true
	}
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	var out strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			out.WriteString(tc.Text)
		}
	}
	return out.String(), res.IsError
}

func listed(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	var names []string
	for tl, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tl.Name)
	}
	return strings.Join(names, ",")
}

// codeModeConfig serves the debug tools and code mode; /mcp serves served,
// /mcp/echo debug_echo and code mode, /mcp/wide everything /mcp serves.
func codeModeConfig(served string) string {
	return `{"builtins": false, "debug": true, "codeMode": {"enabled": true},
		"server": {"mcp": {"tools": ` + served + `, "views": {"echo": {"tools": ["debug_echo", "run_code", "describe_tools"]}, "wide": {"tools": ["*"]}}}}}`
}

// TestMCPDoorsPassEveryStep: tools/call, call_tool, run_code and its inner
// calls, and describe_tools each take a call through the core's whole list
// of steps, in its order.
func TestMCPDoorsPassEveryStep(t *testing.T) {
	d := startDoor(t, codeModeConfig(`["debug_*", "run_code", "describe_tools", "report"]`), mcpgateway.Options{Discovery: mcpgateway.DiscoverySearch})
	cs := d.connect(t, mcpgateway.Path)
	for _, c := range []struct {
		name string
		args any
	}{
		{"debug_echo", map[string]any{"via": "tools/call"}},
		{mcpgateway.CallToolName, map[string]any{"name": "report", "arguments": map[string]any{}}},
		{"run_code", map[string]any{"code": `return tools.debug_echo({via: "run_code"})`}},
		{core.DescribeToolsName, map[string]any{"names": []string{"debug_echo"}}},
	} {
		if out, isErr := call(t, cs, c.name, c.args); isErr {
			t.Fatalf("%s: %s", c.name, out)
		}
	}
	want := core.Steps()
	for name, n := range map[string]int{"debug_echo": 2, "report": 1, "run_code": 1, core.DescribeToolsName: 1} {
		got := d.steps.Calls(name)
		if len(got) != n {
			t.Fatalf("%s: %d calls, want %d: %v", name, len(got), n, got)
		}
		for _, steps := range got {
			if !slices.Equal(steps, want) {
				t.Errorf("%s went through %v, want %v", name, steps, want)
			}
		}
	}
}

// TestServedToolsBindEveryMCPDoor is issue 45's item 4, as an attacker
// over /mcp would try it: with server.mcp.tools serving debug_echo alone,
// neither call_tool, nor run_code, nor describe_tools reaches, runs or
// describes another tool — each answers exactly as for a name the server
// never had, so there is no oracle either.
func TestServedToolsBindEveryMCPDoor(t *testing.T) {
	t.Run("only debug_echo served", func(t *testing.T) {
		d := startDoor(t, codeModeConfig(`["debug_echo"]`), mcpgateway.Options{Discovery: mcpgateway.DiscoverySearch})
		cs := d.connect(t, mcpgateway.Path)
		for _, name := range []string{"debug_fail", "run_code", core.DescribeToolsName} {
			hidden, _ := call(t, cs, mcpgateway.CallToolName, map[string]any{"name": name, "arguments": map[string]any{"message": "x", "code": "return 1", "names": []string{"debug_fail"}}})
			missing, _ := call(t, cs, mcpgateway.CallToolName, map[string]any{"name": "no_such_tool", "arguments": map[string]any{}})
			if hidden != fmt.Sprintf("error unknown tool %q", name) || strings.ReplaceAll(hidden, name, "X") != strings.ReplaceAll(missing, "no_such_tool", "X") {
				t.Errorf("call_tool %s: %q; a name never served: %q", name, hidden, missing)
			}
		}
		if n := len(d.steps.Calls("debug_fail")) + len(d.steps.Calls("run_code")) + len(d.steps.Calls(core.DescribeToolsName)); n != 3 {
			t.Errorf("the core saw %d of the three calls: the gateway must not decide what /mcp serves on its own", n)
		}
		for _, name := range []string{"debug_fail", "run_code", core.DescribeToolsName} {
			if got := d.steps.Calls(name); len(got) != 1 || !slices.Equal(got[0], []string{core.StepObserve, core.StepView}) {
				t.Errorf("%s went through %v, want to stop at the view", name, got)
			}
		}
	})
	t.Run("code mode served", func(t *testing.T) {
		d := startDoor(t, codeModeConfig(`["debug_echo", "run_code", "describe_tools"]`), mcpgateway.Options{Discovery: mcpgateway.DiscoverySearch})
		cs := d.connect(t, mcpgateway.Path)
		if got := listed(t, cs); got != "call_tool,search_tools" {
			t.Fatalf("tools/list: %s", got)
		}
		probe := `try { tools.%s({message: "x"}); return "ran" } catch (e) { return String(e.message).replaceAll(%q, "X") }`
		hidden, _ := call(t, cs, "run_code", map[string]any{"code": fmt.Sprintf(probe, "debug_fail", "debug_fail")})
		missing, _ := call(t, cs, "run_code", map[string]any{"code": fmt.Sprintf(probe, "no_such_tool", "no_such_tool")})
		if hidden != missing || strings.Contains(hidden, "ran") {
			t.Fatalf("run_code calling a tool /mcp does not serve: %q; a name never served: %q", hidden, missing)
		}
		if got := d.steps.Calls("debug_fail"); len(got) != 1 || !slices.Equal(got[0], []string{core.StepObserve, core.StepView}) {
			t.Errorf("the inner call went through %v, want to stop at the view", got)
		}
		described, _ := call(t, cs, core.DescribeToolsName, map[string]any{"names": []string{"debug_fail", "no_such_tool", "debug_echo"}})
		if !strings.Contains(described, "// debug_fail: no such tool") || !strings.Contains(described, "// no_such_tool: no such tool") || !strings.Contains(described, "debug_echo(") {
			t.Fatalf("describe_tools: %s", described)
		}
		found, _ := call(t, cs, mcpgateway.SearchToolName, map[string]any{"query": "fail sleep echo", "limit": 20})
		var hits struct{ Tools []struct{ Name string } }
		if err := json.Unmarshal([]byte(found), &hits); err != nil {
			t.Fatal(err)
		}
		for _, h := range hits.Tools {
			if !slices.Contains([]string{"debug_echo", "run_code", core.DescribeToolsName}, h.Name) {
				t.Errorf("search_tools found %s, which /mcp does not serve", h.Name)
			}
		}
	})
}

// TestNamedViewAtItsPath: /mcp/NAME serves /mcp narrowed to the view NAME
// (server.mcp.views) on every door; a view the config does not have is
// 404, and a client cannot widen its view with a header of its own (this
// client sends the gateway's internal view header naming a wider view).
func TestNamedViewAtItsPath(t *testing.T) {
	t.Parallel()
	d := startDoor(t, codeModeConfig(`["debug_*", "run_code", "describe_tools", "report"]`), mcpgateway.Options{})
	cs := d.connect(t, mcpgateway.Path+"/echo", "Toolnexus-View", "wide")
	if got := listed(t, cs); got != "debug_echo,describe_tools,run_code" {
		t.Fatalf("tools/list at /mcp/echo: %s", got)
	}
	if out, _ := call(t, cs, "debug_fail", map[string]any{"message": "x"}); out != `error unknown tool "debug_fail"` {
		t.Fatalf("tools/call outside the view: %s", out)
	}
	if out, _ := call(t, cs, "run_code", map[string]any{"code": `try { tools.report({}); return "ran" } catch (e) { return "refused" }`}); out != `"refused"` {
		t.Fatalf("run_code's inner call outside the view: %s", out)
	}
	if out, _ := call(t, cs, "debug_echo", map[string]any{"in": "view"}); out != `{"in":"view"}` {
		t.Fatalf("tools/call inside the view: %s", out)
	}
	if got := listed(t, d.connect(t, mcpgateway.Path)); !strings.Contains(got, "debug_fail") {
		t.Fatalf("/mcp itself: %s", got)
	}
	resp, err := http.Post(d.url+mcpgateway.Path+"/nope", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("an unknown view: %s", resp.Status)
	}
}
