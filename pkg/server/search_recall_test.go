package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/search/searchtest"
	"github.com/toolnexus/toolnexus/internal/testutil/inproc"
)

// scoredNames are a search's hits by name (inproc.ScoredNames).
var scoredNames = inproc.ScoredNames

// npmServer finds the entry point of an MCP server installed from npm by
// `make e2e-deps` (skips, or fails in CI, when it is missing).
func npmServer(t *testing.T, pkg string) string {
	t.Helper()
	everythingServer(t) // the same skip/fail rule as every npm peer
	_, file, _, _ := runtime.Caller(0)
	entry := filepath.Join(filepath.Dir(file), "..", "..", "e2e", "node", "node_modules", "@modelcontextprotocol", pkg, "dist", "index.js")
	if _, err := os.Stat(entry); err != nil {
		t.Fatalf("%s not installed (run make e2e-deps): %v", pkg, err)
	}
	return entry
}

// catalogServer serves the search catalog: four real MCP servers from npm
// listed live over stdio, the petstore OpenAPI spec of the http source's
// tests, and the 1,005 written tools imported as an OpenAPI document.
func catalogServer(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	spec := filepath.Join(dir, "catalog.json")
	if err := os.WriteFile(spec, searchtest.OpenAPI(searchtest.Defs(), "http://127.0.0.1:9"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, file, _, _ := runtime.Caller(0)
	petstore := filepath.Join(filepath.Dir(file), "..", "sources", "http", "testdata", "petstore-3.0.yaml")
	mcp := func(pkg string, args ...string) string {
		all := append([]string{npmServer(t, pkg)}, args...)
		b, _ := json.Marshal(all)
		return fmt.Sprintf(`{"command": "node", "args": %s, "env": {"MEMORY_FILE_PATH": %q}, "timeout": 60000}`, b, filepath.Join(dir, "memory.jsonl"))
	}
	cfg := fmt.Sprintf(`{"builtins": false, "skills": [],
		"mcpServers": {"everything": %s, "memory": %s, "filesystem": %s, "thinking": %s},
		"openapi": [{"spec": %q}, {"spec": %q, "prefix": "petstore_", "baseUrl": "http://127.0.0.1:9"}]}`,
		mcp("server-everything", "stdio"), mcp("server-memory"), mcp("server-filesystem", dir), mcp("server-sequential-thinking"),
		spec, petstore)
	return start(t, cfg)
}

type recallQuery struct {
	Query string `json:"query"`
	Want  string `json:"want"`
}

func loadQueries(t *testing.T) []recallQuery {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	b, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "internal", "search", "searchtest", "queries.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Queries []recallQuery }
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Queries
}

// TestSearchRecallOnTheCatalog measures SearchTools over gRPC on a catalog
// of more than 1,000 tools with the 50 queries written before tuning:
// recall@1 (the wanted tool ranks first) and recall@5 (in the top five),
// with a floor on recall@5.
func TestSearchRecallOnTheCatalog(t *testing.T) {
	f := catalogServer(t)
	ctx := context.Background()
	list, err := f.reg.ListTools(ctx, &pb.ListToolsRequest{PageSize: 10000})
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, tl := range list.GetTools() {
		have[tl.GetName()] = true
	}
	if len(have) < 1000 {
		t.Fatalf("catalog has %d tools, want at least 1,000", len(have))
	}
	queries := loadQueries(t)
	if len(queries) != 50 {
		t.Fatalf("%d queries, want 50", len(queries))
	}
	var at1, at5 int
	for _, q := range queries {
		if !have[q.Want] {
			t.Errorf("query %q wants %q, which the catalog does not have", q.Query, q.Want)
			continue
		}
		resp, err := f.reg.SearchTools(ctx, &pb.SearchToolsRequest{Query: q.Query, PageSize: 5})
		if err != nil {
			t.Fatal(err)
		}
		rank := -1
		for i, h := range resp.GetTools() {
			if h.GetTool().GetName() == q.Want {
				rank = i
			}
		}
		switch {
		case rank == 0:
			at1++
			at5++
		case rank > 0:
			at5++
			t.Logf("rank %d: %q wants %s; got %s", rank+1, q.Query, q.Want, scoredNames(resp))
		default:
			t.Logf("MISS: %q wants %s; got %s", q.Query, q.Want, scoredNames(resp))
		}
	}
	r1, r5 := float64(at1)/float64(len(queries)), float64(at5)/float64(len(queries))
	t.Logf("catalog %d tools, %d queries: recall@1 %.2f, recall@5 %.2f", len(have), len(queries), r1, r5)
	if r5 < 0.9 {
		t.Errorf("recall@5 = %.2f, the floor is 0.90", r5)
	}
}
