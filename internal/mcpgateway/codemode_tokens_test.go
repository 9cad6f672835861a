package mcpgateway_test

import (
	"slices"
	"testing"

	"github.com/toolnexus/toolnexus/internal/search/searchtest"
	"github.com/toolnexus/toolnexus/internal/testutil/inproc"
	"github.com/toolnexus/toolnexus/internal/testutil/mcpclient"
)

// TestCodeModeTokens does the three-tool task of TestDiscoveryTokens two
// ways on /mcp with discovery "search" and the 1,005-tool catalog, and
// logs round trips and tokens (bytes/4 of what the model reads and
// writes): the search flow (list, three searches, three direct calls)
// against code mode (list, three searches, one describe_tools, one
// run_code). The catalog's tools answer empty results, so code mode's
// other saving — intermediate results that never pass through the model —
// is not in these numbers. BENCHMARKS.md records them.
func TestCodeModeTokens(t *testing.T) {
	g := inproc.Serve(t, `{"builtins": false, "skills": [], "codeMode": {"enabled": true},
		"server": {"mcp": {"discovery": "search", "pinned": ["run_code", "describe_tools"]}}}`, searchtest.Tools(1005)...)
	cs := g.MustConnect(t, "", nil)
	listTokens := jsonTokens(t, mcpclient.List(t, cs))
	task := []struct {
		query, want string
		args        map[string]any
	}{
		{"find a free time slot for the attendees", "calendar_find_free_time", map[string]any{"attendees": []string{"ana@example.com", "bo@example.com"}, "duration_minutes": 30}},
		{"create a calendar event", "calendar_create_event", map[string]any{"calendar_id": "primary", "summary": "sync", "start": "2026-12-07T10:00:00Z", "end": "2026-12-07T10:30:00Z"}},
		{"send an email", "gmail_send_email", map[string]any{"to": []string{"ana@example.com"}, "subject": "sync", "body": "see you monday"}},
	}
	searchTokens := 0
	for _, step := range task {
		args := map[string]any{"query": step.query, "limit": 3}
		res := mcpclient.Call(t, cs, "search_tools", args)
		if found := foundNames(t, res); !slices.Contains(found, step.want) {
			t.Fatalf("search %q found %v, want %s", step.query, found, step.want)
		}
		searchTokens += jsonTokens(t, args) + jsonTokens(t, res.Content)
	}

	direct := listTokens + searchTokens
	for _, step := range task {
		res := mcpclient.Call(t, cs, step.want, step.args)
		if res.IsError {
			t.Fatalf("%s: %s", step.want, mcpclient.Text(t, res))
		}
		direct += jsonTokens(t, map[string]any{"name": step.want, "arguments": step.args}) + jsonTokens(t, res.Content)
	}

	code := listTokens + searchTokens
	descArgs := map[string]any{"names": []string{"calendar_find_free_time", "calendar_create_event", "gmail_send_email"}}
	desc := mcpclient.Call(t, cs, "describe_tools", descArgs)
	if desc.IsError {
		t.Fatalf("describe_tools: %s", mcpclient.Text(t, desc))
	}
	code += jsonTokens(t, descArgs) + jsonTokens(t, desc.Content)
	script := map[string]any{"code": `const who = ["ana@example.com", "bo@example.com"];
tools.calendar_find_free_time({attendees: who, duration_minutes: 30});
tools.calendar_create_event({calendar_id: "primary", summary: "sync", start: "2026-12-07T10:00:00Z", end: "2026-12-07T10:30:00Z"});
tools.gmail_send_email({to: ["ana@example.com"], subject: "sync", body: "see you monday"});
return "done";`}
	run := mcpclient.Call(t, cs, "run_code", script)
	if run.IsError || mcpclient.Text(t, run) != `"done"` {
		t.Fatalf("run_code: %v", run)
	}
	code += jsonTokens(t, script) + jsonTokens(t, run.Content)
	descTokens := jsonTokens(t, descArgs) + jsonTokens(t, desc.Content)
	t.Logf("three-tool task: search flow %d round trips, %d tokens; code mode %d round trips, %d tokens (describe_tools %d of them; "+
		"without it, writing the script from search_tools' schemas: %d round trips, %d tokens)",
		1+3+3, direct, 1+3+1+1, code, descTokens, 1+3+1, code-descTokens)
}
