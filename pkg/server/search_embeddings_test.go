package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
)

// recordingEmbeddings is an OpenAI-compatible /v1/embeddings on 127.0.0.1
// that keeps every text it is asked and answers a vector per text (its
// length and first letter: enough to rank, nothing to learn from).
type recordingEmbeddings struct {
	url   string
	mu    sync.Mutex
	asked []string
	auth  []string
}

func startRecordingEmbeddings(t *testing.T) *recordingEmbeddings {
	t.Helper()
	r := &recordingEmbeddings{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var in struct{ Input []string }
		if err := json.NewDecoder(req.Body).Decode(&in); err != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		r.asked = append(r.asked, in.Input...)
		r.auth = append(r.auth, req.Header.Get("Authorization"))
		r.mu.Unlock()
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var out struct {
			Data []item `json:"data"`
		}
		for i, text := range in.Input {
			out.Data = append(out.Data, item{i, []float32{float32(len(text)), float32(text[len(text)-1]), 1}})
		}
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(ts.Close)
	r.url = ts.URL + "/v1/embeddings"
	return r
}

func (r *recordingEmbeddings) texts() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.asked)
}

// TestSearchEmbeddingsConfigReachesTheEndpoint: search.embeddings as an
// operator writes it — a key from the environment, nomic's task prefixes,
// a weight — reaches a real endpoint through the whole server: every
// tool's text is sent after documentPrefix, a SearchTools query after
// queryPrefix, the key as a bearer token; searches are counted lexical
// (not_ready) until every vector is in, then used; the key is in no
// metric.
func TestSearchEmbeddingsConfigReachesTheEndpoint(t *testing.T) {
	const key = "sk-embed-test-7c1f0e"
	t.Setenv("TOOLNEXUS_TEST_EMBED_KEY", key)
	emb := startRecordingEmbeddings(t)
	cfg := fmt.Sprintf(`{"builtins": false, "skills": [], "search": {"embeddings": {"url": %q, "model": "nomic-embed-text",
		"apiKey": "${TOOLNEXUS_TEST_EMBED_KEY}", "queryPrefix": "search_query: ", "documentPrefix": "search_document: ", "weight": 2}}}`, emb.url)
	f := start(t, cfg, echoTool("weather_forecast"), echoTool("issue_create"))
	ctx := context.Background()
	search := func() {
		t.Helper()
		if _, err := f.reg.SearchTools(ctx, &pb.SearchToolsRequest{Query: "will it rain tomorrow", PageSize: 5}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for metricValue(t, f.scrape(t), "toolnexus_search_embeddings_total", `outcome="used"`) != "1" {
		if time.Now().After(deadline) {
			t.Fatalf("no search used the embeddings; metrics:\n%s", metricLine(f.scrape(t), "toolnexus_search_embeddings_total"))
		}
		search()
		time.Sleep(20 * time.Millisecond)
	}
	var docs, queries int
	for _, text := range emb.texts() {
		switch {
		case text == "search_query: will it rain tomorrow":
			queries++
		case strings.HasPrefix(text, "search_document: "):
			docs++
		case text == "probe":
		default:
			t.Errorf("the endpoint was asked %q: neither a prefixed tool text nor the prefixed query", text)
		}
	}
	if docs < 2 || queries != 1 {
		t.Fatalf("the endpoint was asked %d tool texts and %d queries, want every tool (2) and the one query once (then cached)", docs, queries)
	}
	emb.mu.Lock()
	for _, a := range emb.auth {
		if a != "Bearer "+key {
			t.Errorf("Authorization %q, want the configured key as a bearer token", a)
		}
	}
	emb.mu.Unlock()
	if body := f.scrape(t); strings.Contains(body, key) {
		t.Fatal("the API key is in the metrics")
	}
}
