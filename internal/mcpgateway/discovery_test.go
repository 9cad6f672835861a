package mcpgateway_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/internal/search/searchtest"
	"github.com/toolnexus/toolnexus/internal/testutil/inproc"
	"github.com/toolnexus/toolnexus/internal/testutil/mcpclient"
)

const discoveryConfig = `{"debug": true, "builtins": false, "skills": [],
	"server": {"mcp": {"discovery": "search", "pinned": ["debug_echo", "zendesk_merge_*"]}},
	"auth": {"tokens": [
		{"name": "ops", "token": "${TN_ADMIN}", "admin": true},
		{"name": "agent", "token": "${TN_AGENT}", "tools": ["debug_*", "gmail_list_*"]}]}}`

func foundNames(t *testing.T, res *mcp.CallToolResult) []string {
	t.Helper()
	var out struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if res.IsError {
		t.Fatalf("search_tools failed: %s", mcpclient.Text(t, res))
	}
	if err := json.Unmarshal([]byte(mcpclient.Text(t, res)), &out); err != nil {
		t.Fatalf("search_tools result is not JSON: %v", err)
	}
	names := make([]string, len(out.Tools))
	for i, tl := range out.Tools {
		names[i] = tl.Name
		if len(tl.InputSchema) == 0 {
			t.Errorf("%s comes without its input schema", tl.Name)
		}
	}
	return names
}

// TestMCPDiscoveryBySearch: with server.mcp.discovery "search", tools/list
// is search_tools, call_tool and the pinned tools; a tool found by search
// runs by its own name and through call_tool; a token's allowlist bounds
// both what search shows and what either way of calling runs.
func TestMCPDiscoveryBySearch(t *testing.T) {
	t.Setenv("TN_ADMIN", adminSecret)
	t.Setenv("TN_AGENT", agentSecret)
	g := inproc.Serve(t, discoveryConfig, searchtest.Tools(1005)...)
	cs := g.MustConnect(t, adminSecret, nil)

	// One page, even though the SDK pages its 1,011 tools at 1,000: a
	// client reading only the first page still finds search_tools.
	page, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := mcpclient.Names(page.Tools); !slices.Equal(got, []string{"call_tool", "debug_echo", "search_tools", "zendesk_merge_support_ticket"}) || page.NextCursor != "" {
		t.Fatalf("tools/list = %v (next cursor %q), want call_tool, debug_echo and zendesk_merge_support_ticket (pinned; the latter sorts past the SDK's first page), search_tools on one page", got, page.NextCursor)
	}
	found := foundNames(t, mcpclient.Call(t, cs, "search_tools", map[string]any{"query": "send an email to a colleague", "limit": 3}))
	if len(found) != 3 || !slices.Contains(found, "gmail_send_email") {
		t.Fatalf("search_tools found %v, want gmail_send_email among 3", found)
	}
	t.Run("found tool callable by its own name", func(t *testing.T) {
		if res := mcpclient.Call(t, cs, "gmail_send_email", map[string]any{"to": []string{"a@example.com"}}); res.IsError {
			t.Fatalf("%s", mcpclient.Text(t, res))
		}
	})
	t.Run("call_tool runs the named tool", func(t *testing.T) {
		res := mcpclient.Call(t, cs, "call_tool", map[string]any{"name": "debug_echo", "arguments": map[string]any{"message": "via call_tool"}})
		if res.IsError || !strings.Contains(mcpclient.Text(t, res), "via call_tool") {
			t.Fatalf("%v %s", res.IsError, mcpclient.Text(t, res))
		}
	})
	t.Run("call_tool without a name is an error result", func(t *testing.T) {
		res := mcpclient.Call(t, cs, "call_tool", map[string]any{"arguments": map[string]any{}})
		if !res.IsError || !strings.Contains(mcpclient.Text(t, res), `call_tool needs {"name"`) {
			t.Fatalf("%v %s", res.IsError, mcpclient.Text(t, res))
		}
	})
	t.Run("search without a query is an error result", func(t *testing.T) {
		if res := mcpclient.Call(t, cs, "search_tools", map[string]any{}); !res.IsError {
			t.Fatalf("%s", mcpclient.Text(t, res))
		}
	})
	t.Run("allowlist bounds search and calls", func(t *testing.T) {
		agent := g.MustConnect(t, agentSecret, nil)
		found := foundNames(t, mcpclient.Call(t, agent, "search_tools", map[string]any{"query": "send an email", "limit": 20}))
		for _, n := range found {
			if !strings.HasPrefix(n, "debug_") && !strings.HasPrefix(n, "gmail_list_") {
				t.Fatalf("search shows %s outside the agent's allowlist: %v", n, found)
			}
		}
		// Calling the hidden tool, by name or through call_tool, is refused
		// as a tool that does not exist.
		if _, err := agent.CallTool(t.Context(), &mcp.CallToolParams{Name: "gmail_send_email", Arguments: map[string]any{}}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
			t.Fatalf("hidden tool by name: %v", err)
		}
		if _, err := agent.CallTool(t.Context(), &mcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "gmail_send_email"}}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
			t.Fatalf("hidden tool through call_tool: %v", err)
		}
	})
}

func jsonTokens(t *testing.T, v any) int {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return len(b) / 4
}

// TestDiscoveryTokens compares what a model reads (tokens ≈ bytes/4 of
// the JSON) to do one task needing three tools of the 1,005-tool catalog:
// the whole tools/list, against the search flow (the short tools/list,
// then one search_tools per tool with its three hits). BENCHMARKS.md
// records the numbers this logs.
func TestDiscoveryTokens(t *testing.T) {
	tools := searchtest.Tools(1005)
	full := inproc.Serve(t, `{"builtins": false, "skills": []}`, tools...)
	fullList := mcpclient.List(t, full.MustConnect(t, "", nil))
	listTokens := jsonTokens(t, fullList)

	disc := inproc.Serve(t, `{"builtins": false, "skills": [], "server": {"mcp": {"discovery": "search"}}}`, tools...)
	cs := disc.MustConnect(t, "", nil)
	searchTokens := jsonTokens(t, mcpclient.List(t, cs))
	task := []struct{ query, want string }{
		{"find a free time slot for the attendees", "calendar_find_free_time"},
		{"create a calendar event", "calendar_create_event"},
		{"send an email", "gmail_send_email"},
	}
	for _, step := range task {
		args := map[string]any{"query": step.query, "limit": 3}
		res := mcpclient.Call(t, cs, "search_tools", args)
		if found := foundNames(t, res); !slices.Contains(found, step.want) {
			t.Fatalf("search %q found %v, want %s", step.query, found, step.want)
		}
		searchTokens += jsonTokens(t, args) + jsonTokens(t, res.Content)
	}
	t.Logf("tools/list of %d tools: %d tokens; search flow for 3 tools (list + 3 searches of 3 hits): %d tokens (%.1f%%)",
		len(fullList), listTokens, searchTokens, 100*float64(searchTokens)/float64(listTokens))
	if searchTokens*10 > listTokens {
		t.Errorf("the search flow costs %d tokens, more than a tenth of the whole list's %d", searchTokens, listTokens)
	}
}
