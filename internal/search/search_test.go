package search

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

var layer = registry.Layer(registry.Kind{Name: "test", Precedence: 1})

func mkTool(t testing.TB, name, desc, schema string) tool.Tool {
	t.Helper()
	opts := []tool.Option{tool.WithDescription(desc)}
	if schema != "" {
		opts = append(opts, tool.WithInputSchema(json.RawMessage(schema)))
	}
	tl, err := tool.New(name, func(context.Context, tool.Call) tool.Result { return tool.Result{} }, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

func snapshotOf(t testing.TB, tools ...tool.Tool) *registry.Snapshot {
	t.Helper()
	r := registry.New()
	if err := r.Replace(layer, tools); err != nil {
		t.Fatal(err)
	}
	return r.Snapshot()
}

func names(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Entry.Tool.Name
	}
	return out
}

func TestTerms(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"github_search_issues", "github search issu"},
		{"get-weather-forecast", "get weather forecast"},
		{"getHTTPStatus2", "get http status 2"},
		{"createPullRequest", "creat pull request"},
		{"Create a new file in the repository", "creat new file repositori"},
		{"files filed filing", "file file file"},
		{"queries query", "queri queri"},
		{"date dated site sites", "date date site site"},
		{"open it on GitHub with JavaScript", "open github javascript"},
		{"MongoDB CircleCI DevTools iPhone", "mongodb circleci devtool phone"},
		{"GetUserByID HTTPServer", "get user id http server"},
		{"someone's copy, don't", "copi"},
		{"what does it make, how", ""},
		{"", ""},
		{"__--__", ""},
		{"données météo", "données météo"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got := textAnalyzer.appendTerms(nil, tc.in)
			want := []string{}
			if tc.want != "" {
				want = splitSpace(tc.want)
			}
			if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
				t.Fatalf("terms(%q) = %q, want %q", tc.in, got, want)
			}
		})
	}
}

func splitSpace(s string) []string {
	var out []string
	var cur []rune
	for _, r := range s {
		if r == ' ' {
			out = append(out, string(cur))
			cur = nil
			continue
		}
		cur = append(cur, r)
	}
	return append(out, string(cur))
}

func fixture(t testing.TB) *registry.Snapshot {
	return snapshotOf(t,
		mkTool(t, "weather_forecast", "Daily forecast for a city: temperature, rain and wind.", `{"type":"object","properties":{"city":{"type":"string","description":"City name"},"days":{"type":"integer"}}}`),
		mkTool(t, "github_search_issues", "Search issues and pull requests in a GitHub repository.", `{"type":"object","properties":{"repo":{"type":"string","description":"owner/name"},"query":{"type":"string"}}}`),
		mkTool(t, "github_create_issue", "Open a new issue in a GitHub repository.", `{"type":"object","properties":{"repo":{"type":"string"},"title":{"type":"string"},"body":{"type":"string"}}}`),
		mkTool(t, "slack_post_message", "Post a message to a Slack channel.", `{"type":"object","properties":{"channel":{"type":"string"},"text":{"type":"string","description":"The message text; mentions the weather are fine"}}}`),
		mkTool(t, "fs_read_file", "Read a text file from the workspace.", `{"type":"object","properties":{"path":{"type":"string"}}}`),
		mkTool(t, "broken_schema", "A tool whose schema is not an object.", `{"type":"object","properties":{"x":{"description":"a city"}}}`),
	)
}

func TestSearchRanks(t *testing.T) {
	ix := Build(fixture(t), All, nil)
	for _, tc := range []struct {
		query string
		first string
	}{
		{"weather forecast for Paris", "weather_forecast"},
		{"find issues in a repo", "github_search_issues"},
		{"open a new GitHub issue", "github_create_issue"},
		{"post to slack channel", "slack_post_message"},
		{"read file", "fs_read_file"},
		{"githubCreateIssue", "github_create_issue"},
		{"github-search-issues", "github_search_issues"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			hits := ix.Search(tc.query, 3, nil).Hits
			if len(hits) == 0 || hits[0].Entry.Tool.Name != tc.first {
				t.Fatalf("Search(%q) = %v, want %s first", tc.query, names(hits), tc.first)
			}
			for i := 1; i < len(hits); i++ {
				if hits[i].Score > hits[i-1].Score {
					t.Fatalf("not sorted by score: %v", hits)
				}
			}
		})
	}
}

func TestSearchEdges(t *testing.T) {
	ix := Build(fixture(t), All, nil)
	t.Run("no known term", func(t *testing.T) {
		if hits := ix.Search("zebra xylophone", 5, nil).Hits; len(hits) != 0 {
			t.Fatalf("hits %v", names(hits))
		}
	})
	t.Run("only stopwords", func(t *testing.T) {
		if hits := ix.Search("the of and", 5, nil).Hits; len(hits) != 0 {
			t.Fatalf("hits %v", names(hits))
		}
	})
	t.Run("k zero", func(t *testing.T) {
		if hits := ix.Search("weather", 0, nil).Hits; hits != nil {
			t.Fatalf("hits %v", names(hits))
		}
	})
	t.Run("k caps the hits", func(t *testing.T) {
		if hits := ix.Search("github issue repository", 1, nil).Hits; len(hits) != 1 {
			t.Fatalf("hits %v", names(hits))
		}
	})
	t.Run("a page deeper than the fusion", func(t *testing.T) {
		tools := make([]tool.Tool, 150)
		for i := range tools {
			tools[i] = mkTool(t, fmt.Sprintf("chat_%03d", i), fmt.Sprintf("Send message number %d.", i), "")
		}
		if hits := Build(snapshotOf(t, tools...), All, nil).Search("message", 100, nil).Hits; len(hits) != 100 {
			t.Fatalf("a page of 100 over 150 matching tools has %d hits", len(hits))
		}
	})
	t.Run("keep hides tools", func(t *testing.T) {
		hits := ix.Search("github issue", 5, func(e *registry.Entry) bool { return e.Tool.Name != "github_create_issue" }).Hits
		if slices.Contains(names(hits), "github_create_issue") || len(hits) == 0 {
			t.Fatalf("hits %v", names(hits))
		}
	})
	t.Run("parameter words count", func(t *testing.T) {
		hits := ix.Search("city", 5, nil).Hits
		if len(hits) == 0 || hits[0].Entry.Tool.Name != "weather_forecast" {
			t.Fatalf("hits %v", names(hits))
		}
	})
	t.Run("repeated query words count once", func(t *testing.T) {
		a := ix.Search("weather", 5, nil).Hits
		b := ix.Search("weather weather weather", 5, nil).Hits
		if !slices.Equal(names(a), names(b)) || a[0].Score != b[0].Score {
			t.Fatalf("%v vs %v", a, b)
		}
	})
	t.Run("ties by name", func(t *testing.T) {
		s := snapshotOf(t, mkTool(t, "b_tool", "same words", ""), mkTool(t, "a_tool", "same words", ""))
		if got := names(Build(s, All, nil).Search("same words", 5, nil).Hits); !slices.Equal(got, []string{"a_tool", "b_tool"}) {
			t.Fatalf("order %v", got)
		}
	})
	t.Run("empty registry", func(t *testing.T) {
		if hits := Build(registry.New().Snapshot(), All, nil).Search("anything", 5, nil).Hits; len(hits) != 0 {
			t.Fatalf("hits %v", hits)
		}
	})
}

// TestCacheFollowsSnapshots: the cache answers from the index of the
// snapshot it is given, a reload shows up at the next search and not
// before, and unchanged tools keep their analysis.
func TestCacheFollowsSnapshots(t *testing.T) {
	r := registry.New()
	if err := r.Replace(layer, []tool.Tool{mkTool(t, "old_weather", "weather report", "")}); err != nil {
		t.Fatal(err)
	}
	var c Cache
	s1 := r.Snapshot()
	ix1 := c.For(s1, All)
	if c.For(s1, All) != ix1 {
		t.Fatal("same snapshot built twice")
	}
	if err := r.Replace(registry.Layer(registry.Kind{Name: "other", Precedence: 2}), []tool.Tool{mkTool(t, "new_weather", "weather radar", "")}); err != nil {
		t.Fatal(err)
	}
	s2 := r.Snapshot()
	if got := names(ix1.Search("weather", 5, nil).Hits); !slices.Equal(got, []string{"old_weather"}) {
		t.Fatalf("old index sees %v", got)
	}
	ix2 := c.For(s2, All)
	if got := names(ix2.Search("weather", 5, nil).Hits); len(got) != 2 {
		t.Fatalf("new index sees %v", got)
	}
	old, _ := s1.Lookup("old_weather")
	cur, _ := s2.Lookup("old_weather")
	if old.Tool != cur.Tool || ix2.docs[slices.Index(ix2.entries, cur)] != ix1.docs[0] {
		t.Fatal("unchanged tool analysed again")
	}
	if c.For(s1, All) == ix2 || c.For(s2, All) != ix2 {
		t.Fatal("an older snapshot must not replace the cached newer index")
	}
}

// TestConcurrentSearchAndReload runs searches while the registry reloads,
// under -race: every search answers from one whole snapshot.
func TestConcurrentSearchAndReload(t *testing.T) {
	r := registry.New()
	var c Cache
	stop := testutil.Hammer(t, 4, func(int) bool {
		snap := r.Snapshot()
		hits := c.For(snap, All).Search("tool generation", 100, nil).Hits
		// Each revision n publishes exactly n tools whose names share the
		// generation word: a mixed snapshot would not.
		if len(hits) != snap.Len() {
			t.Errorf("revision %d: %d hits for %d tools", snap.Revision(), len(hits), snap.Len())
			return false
		}
		return true
	})
	for gen := 1; gen <= 50; gen++ {
		tools := make([]tool.Tool, gen)
		for i := range tools {
			tools[i] = mkTool(t, fmt.Sprintf("tool_%d_%d", gen, i), "a tool of one generation", "")
		}
		if err := r.Replace(layer, tools); err != nil {
			t.Fatal(err)
		}
	}
	stop()
}
