package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

func describedTool(name, desc string) tool.Tool {
	return tool.Must(tool.Native(name, func(_ context.Context, args map[string]any) (any, error) {
		return args, nil
	}, tool.WithDescription(desc)))
}

func TestSearch(t *testing.T) {
	srv := startServer(t, debugOnly,
		describedTool("weather_forecast", "Daily weather forecast for a city."),
		describedTool("github_create_issue", "Open a new issue in a GitHub repository."),
		describedTool("slack_post_message", "Post a message to a Slack channel."))

	t.Run("table best first", func(t *testing.T) {
		out := against(t, srv, "search", "open", "an", "issue", "on", "github").want(t, 0).stdout
		lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
		if !strings.HasPrefix(lines[0], "SCORE") || len(lines) < 2 || !strings.Contains(lines[1], "github_create_issue") {
			t.Fatalf("table:\n%s", out)
		}
	})
	t.Run("quoted query, limit and source", func(t *testing.T) {
		out := against(t, srv, "search", "--limit", "1", "--source", "custom", "weather in a city").want(t, 0).stdout
		if lines := strings.Split(strings.TrimRight(out, "\n"), "\n"); len(lines) != 2 || !strings.Contains(lines[1], "weather_forecast") {
			t.Fatalf("table:\n%s", out)
		}
	})
	t.Run("json", func(t *testing.T) {
		var doc struct {
			Tools []struct {
				Tool  struct{ Name string } `json:"tool"`
				Score float64               `json:"score"`
			} `json:"tools"`
		}
		out := against(t, srv, "--json", "search", "slack message").want(t, 0).stdout
		if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Tools) == 0 || doc.Tools[0].Tool.Name != "slack_post_message" || doc.Tools[0].Score <= 0 {
			t.Fatalf("%v\n%s", err, out)
		}
	})
	t.Run("no match says so", func(t *testing.T) {
		out := against(t, srv, "search", "xylophone").want(t, 0).stdout
		if !strings.Contains(out, `no tool matches "xylophone"`) {
			t.Fatalf("out:\n%s", out)
		}
	})
	t.Run("no query is a usage error", func(t *testing.T) {
		r := against(t, srv, "search").want(t, 2)
		if !strings.Contains(r.stderr, "search") {
			t.Fatalf("stderr:\n%s", r.stderr)
		}
	})
}

func TestExportDeferLoading(t *testing.T) {
	srv := startServer(t, debugOnly, describedTool("weather_forecast", "Daily weather forecast for a city."))
	out := against(t, srv, "export", "--format", "anthropic", "--defer-loading", "--pin", "debug_echo").want(t, 0).stdout
	var tools []map[string]any
	if err := json.Unmarshal([]byte(out), &tools); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	deferred := map[string]any{}
	for _, tl := range tools[1:] {
		deferred[tl["name"].(string)] = tl["defer_loading"]
	}
	if tools[0]["name"] != "tool_search_tool_bm25" || deferred["weather_forecast"] != true || deferred["debug_echo"] != nil {
		t.Fatalf("export:\n%s", out)
	}
	r := against(t, srv, "export", "--format", "openai", "--defer-loading")
	if r.code == 0 || !strings.Contains(r.stderr, "SearchTools") {
		t.Fatalf("openai with --defer-loading: %d %s", r.code, r.stderr)
	}
}
