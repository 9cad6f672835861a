package grpcapi_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/inproc"
)

// TestSearchShowsOnlyWhatTheCallerMayUse attacks the allowlist through
// search: a query naming a hidden tool exactly does not reveal it, for
// any caller without it in their allowlist.
func TestSearchShowsOnlyWhatTheCallerMayUse(t *testing.T) {
	reg := inproc.ServeAuth(t, nil).Registry
	for _, tc := range []struct {
		who, secret, query, want string
	}{
		{"agent-a sees its own tools", testutil.AgentSecret, "echo mine", "mine_a,debug_echo"},
		{"agent-a asks for a hidden tool by name", testutil.AgentSecret, "other", ""},
		{"agent-a asks for a hidden debug tool", testutil.AgentSecret, "debug_sleep sleep", "debug_echo"},
		{"dbg sees only source debug", testutil.DebugSecret, "echo", "debug_echo"},
		{"admin sees everything", testutil.AdminSecret, "other", "other"},
	} {
		t.Run(tc.who, func(t *testing.T) {
			resp, err := reg.SearchTools(inproc.Bearer(tc.secret), &pb.SearchToolsRequest{Query: tc.query})
			if err != nil {
				t.Fatal(err)
			}
			if got := inproc.ScoredNames(resp); got != tc.want {
				t.Fatalf("SearchTools(%q) = %q, want %q", tc.query, got, tc.want)
			}
		})
	}
}

func TestSearchToolsOverGRPC(t *testing.T) {
	t.Parallel()
	f := inproc.Serve(t, inproc.DebugOnly, inproc.Echo("weather_forecast"), inproc.Echo("github_create_issue"), inproc.Echo("slack_post_message"))
	ctx := context.Background()
	t.Run("ranked with scores and revision", func(t *testing.T) {
		resp, err := f.Registry.SearchTools(ctx, &pb.SearchToolsRequest{Query: "create a github issue"})
		if err != nil {
			t.Fatal(err)
		}
		tools := resp.GetTools()
		if len(tools) == 0 || tools[0].GetTool().GetName() != "github_create_issue" || tools[0].GetScore() <= 0 {
			t.Fatalf("hits %v", resp)
		}
		if tools[0].GetTool().GetInputSchema() == nil || resp.GetRevision() == 0 {
			t.Fatalf("want the full tool and the revision: %v", resp)
		}
	})
	t.Run("sources filter", func(t *testing.T) {
		resp, err := f.Registry.SearchTools(ctx, &pb.SearchToolsRequest{Query: "echo", Sources: []string{"debug"}})
		if err != nil || inproc.ScoredNames(resp) != "debug_echo" {
			t.Fatalf("%v %s", err, inproc.ScoredNames(resp))
		}
	})
	t.Run("page size", func(t *testing.T) {
		resp, err := f.Registry.SearchTools(ctx, &pb.SearchToolsRequest{Query: "echo", PageSize: 2})
		if err != nil || len(resp.GetTools()) != 2 {
			t.Fatalf("%v %s", err, inproc.ScoredNames(resp))
		}
	})
	t.Run("no match is an empty list", func(t *testing.T) {
		resp, err := f.Registry.SearchTools(ctx, &pb.SearchToolsRequest{Query: "xylophone"})
		if err != nil || len(resp.GetTools()) != 0 {
			t.Fatalf("%v %s", err, inproc.ScoredNames(resp))
		}
	})
	for _, bad := range []struct {
		name string
		req  *pb.SearchToolsRequest
		msg  string
	}{
		{"empty query", &pb.SearchToolsRequest{}, "query is required"},
		{"huge query", &pb.SearchToolsRequest{Query: strings.Repeat("a ", 600)}, "limit is 1024"},
		{"negative page size", &pb.SearchToolsRequest{Query: "x", PageSize: -1}, "page_size must be >= 0"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			_, err := f.Registry.SearchTools(ctx, bad.req)
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), bad.msg) {
				t.Fatalf("%v, want InvalidArgument naming %q", err, bad.msg)
			}
		})
	}
}

// TestExportDeferLoadingForAnthropic: the export puts Anthropic's tool
// search tool first and defers every tool but the pinned ones; other
// formats and bad pins are refused with what to do instead.
func TestExportDeferLoadingForAnthropic(t *testing.T) {
	t.Parallel()
	f := inproc.Serve(t, inproc.DebugOnly, inproc.Echo("weather_forecast"), inproc.Echo("github_create_issue"))
	ctx := context.Background()
	resp, err := f.Registry.ExportTools(ctx, &pb.ExportToolsRequest{Format: pb.ExportFormat_EXPORT_FORMAT_ANTHROPIC, DeferLoading: true, Pinned: []string{"github_*"}})
	if err != nil {
		t.Fatal(err)
	}
	var tools []map[string]any
	if err := json.Unmarshal([]byte(resp.GetJson()), &tools); err != nil {
		t.Fatal(err)
	}
	if tools[0]["type"] != "tool_search_tool_bm25_20251119" || tools[0]["name"] != "tool_search_tool_bm25" {
		t.Fatalf("first entry %v, want the BM25 tool search tool", tools[0])
	}
	deferred := map[string]bool{}
	for _, tl := range tools[1:] {
		if tl["input_schema"] == nil {
			t.Fatalf("%v has no input_schema", tl)
		}
		deferred[tl["name"].(string)] = tl["defer_loading"] == true
	}
	if !deferred["weather_forecast"] || !deferred["debug_echo"] || deferred["github_create_issue"] {
		t.Fatalf("defer_loading per tool %v; want all deferred but github_create_issue (pinned)", deferred)
	}
	for _, bad := range []struct {
		name string
		req  *pb.ExportToolsRequest
		msg  string
	}{
		{"openai", &pb.ExportToolsRequest{Format: pb.ExportFormat_EXPORT_FORMAT_OPENAI, DeferLoading: true}, "call SearchTools"},
		{"pinned alone", &pb.ExportToolsRequest{Format: pb.ExportFormat_EXPORT_FORMAT_ANTHROPIC, Pinned: []string{"a"}}, "set defer_loading"},
		{"bad glob", &pb.ExportToolsRequest{Format: pb.ExportFormat_EXPORT_FORMAT_ANTHROPIC, DeferLoading: true, Pinned: []string{"["}}, "pinned[0]"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			_, err := f.Registry.ExportTools(ctx, bad.req)
			if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), bad.msg) {
				t.Fatalf("%v, want InvalidArgument naming %q", err, bad.msg)
			}
		})
	}
}
