package search

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

const testAPIKey = "sk-test-0123456789-secret"

// embedServer is an OpenAI-compatible embeddings endpoint on 127.0.0.1
// whose mode the test switches: "ok" answers vectors in which words of one
// concept share a dimension (fork and copy, bug and issue), "error"
// answers 500 with a body that echoes the request's Authorization header
// (as some APIs do), "hang" holds the request until the test ends.
type embedServer struct {
	url     string
	mode    atomic.Value // string
	entered atomic.Int64 // requests received
	release chan struct{}

	mu     sync.Mutex
	inputs []string // every text asked, in order
}

func (s *embedServer) asked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.inputs)
}

var concepts = [][]string{{"fork", "copy", "duplicate", "clone"}, {"bug", "issue", "defect"}, {"weather", "forecast"}}

func conceptVector(text string) []float32 {
	v := make([]float32, 64)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !('a' <= r && r <= 'z') }) {
		dim := -1
		for i, c := range concepts {
			for _, x := range c {
				if strings.TrimSuffix(w, "s") == x || w == x {
					dim = i
				}
			}
		}
		if dim < 0 {
			h := fnv.New32a()
			h.Write([]byte(w))
			dim = len(concepts) + int(h.Sum32()%uint32(64-len(concepts)))
		}
		v[dim]++
	}
	return v
}

func startEmbedServer(t *testing.T) *embedServer {
	t.Helper()
	s := &embedServer{release: make(chan struct{})}
	s.mode.Store("ok")
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Input []string }
		_ = json.NewDecoder(r.Body).Decode(&req)
		s.mu.Lock()
		s.inputs = append(s.inputs, req.Input...)
		s.mu.Unlock()
		s.entered.Add(1)
		switch s.mode.Load().(string) {
		case "hang":
			<-s.release
			return
		case "error":
			http.Error(w, "invalid key "+r.Header.Get("Authorization"), http.StatusInternalServerError)
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		out := struct {
			Data []item `json:"data"`
		}{}
		for i, in := range req.Input {
			out.Data = append(out.Data, item{i, conceptVector(in)})
		}
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(s.release) }) // runs first: a hung request ends before the server closes
	s.url = ts.URL + "/v1/embeddings"
	return s
}

// outcomes counts the semantic side's outcomes, as the metric does.
type outcomes struct {
	mu sync.Mutex
	n  map[string]int
}

func (o *outcomes) count(s string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.n == nil {
		o.n = map[string]int{}
	}
	o.n[s]++
}

func (o *outcomes) get(s string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.n[s]
}

func embedCatalog(t *testing.T) *registry.Snapshot {
	return snapshotOf(t,
		mkTool(t, "repo_fork", "Fork a repository to your account.", ""),
		mkTool(t, "repo_list_issues", "List the issues of a repository.", ""),
		mkTool(t, "weather_forecast", "Daily forecast for a city.", ""),
		mkTool(t, "project_settings", "Change the settings of a project.", ""),
	)
}

// embedRig is an embedder on an endpoint in the given mode, its log and
// outcomes, and a cache using it, handed embedCatalog.
type embedRig struct {
	srv  *embedServer
	log  lockedBuffer
	o    outcomes
	e    *Embedder
	snap *registry.Snapshot
	c    *Cache
}

// lockedBuffer is a log the worker writes while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newEmbedRig(t *testing.T, mode string) *embedRig {
	t.Helper()
	r := &embedRig{srv: startEmbedServer(t), snap: embedCatalog(t)}
	r.srv.mode.Store(mode)
	r.e = NewEmbedder(EmbedOptions{URL: r.srv.url, Model: "test", APIKey: testAPIKey, QueryTimeout: 100 * time.Millisecond,
		Count: r.o.count, Logger: slog.New(slog.NewTextHandler(&r.log, nil))})
	t.Cleanup(r.e.Close)
	r.c = &Cache{Embedder: r.e}
	r.e.Update(r.snap)
	return r
}

// waitFor polls cond until it holds: the background worker's progress,
// not a speed, is what it waits for.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestEmbeddingsFuseMeaning: with every tool's vector computed in the
// background, a query sharing no word with the tool it means finds it
// through the semantic side, fused with the lexical ranking.
func TestEmbeddingsFuseMeaning(t *testing.T) {
	r := newEmbedRig(t, "ok")
	e, snap, c, o := r.e, r.snap, r.c, &r.o
	waitFor(t, "the tools' vectors", func() bool { return c.For(snap, All).vectorsOf(e) != nil })
	hits := c.For(snap, All).Search("duplicate it for me", 3, nil).Hits
	if len(hits) == 0 || hits[0].Entry.Tool.Name != "repo_fork" || hits[0].Reason != "meaning (embeddings)" {
		t.Fatalf("hits %v (%+v), want repo_fork first, found by meaning", names(hits), hits)
	}
	if o.get(EmbedUsed) != 1 {
		t.Fatalf("outcomes %v", o.n)
	}
	// Only what the view shows takes part.
	narrow := View{Key: "no-fork", Visible: func(en *registry.Entry) bool { return en.Tool.Name != "repo_fork" }}
	if got := names(c.For(snap, narrow).Search("duplicate it for me", 4, nil).Hits); strings.Contains(strings.Join(got, ","), "repo_fork") {
		t.Fatalf("a hidden tool came back through the semantic side: %v", got)
	}
}

// TestEmbeddingsEndpointThatHangsOrErrorsNeverSlowsSearch: an endpoint that
// errors from the start never gets a search to wait (no vectors: lexical
// answers, counted not_ready); one that starts hanging costs the one search
// that meets it its QueryTimeout — it answers lexically while the request is
// still held — and later searches do not ask it at all until a background
// probe sees it answer again. The API key is in no log line.
func TestEmbeddingsEndpointThatHangsOrErrorsNeverSlowsSearch(t *testing.T) {
	r := newEmbedRig(t, "error")
	srv, e, snap, c, o := r.srv, r.e, r.snap, r.c, &r.o
	waitFor(t, "the worker to meet the failing endpoint", func() bool { return e.down.Load() })
	if hits := c.For(snap, All).Search("list the issues", 2, nil).Hits; len(hits) == 0 || hits[0].Entry.Tool.Name != "repo_list_issues" {
		t.Fatalf("lexical answer %v", names(hits))
	}
	if o.get(EmbedUnavailable)+o.get(EmbedNotReady) != 1 {
		t.Fatalf("outcomes %v", o.n)
	}
	srv.mode.Store("ok")
	waitFor(t, "the probe to see the endpoint answer", func() bool { return !e.down.Load() && c.For(snap, All).vectorsOf(e) != nil })
	srv.mode.Store("hang")
	before := len(srv.asked())
	hits := c.For(snap, All).Search("weather forecast for Paris", 2, nil).Hits
	if len(hits) == 0 || hits[0].Entry.Tool.Name != "weather_forecast" || o.get(EmbedTimeout) != 1 {
		t.Fatalf("hits %v, outcomes %v: want the lexical answer and a timeout counted", names(hits), o.n)
	}
	// The search asked its query once, and that request is still held;
	// the only other request allowed is the background worker's probe,
	// which the timeout wakes and which may arrive at any moment.
	during := srv.asked()[before:]
	if queries := countExcept(during, "probe"); queries != 1 || !slices.Contains(during, "weather forecast for Paris") {
		t.Fatalf("asked %q during the search, want its query once (and at most the probe)", during)
	}
	held := len(srv.asked())
	for _, q := range []string{"list issues", "fork a repository", "project settings"} {
		c.For(snap, All).Search(q, 2, nil)
	}
	if o.get(EmbedUnavailable) < 3 {
		t.Fatalf("outcomes %v: later searches must skip the endpoint", o.n)
	}
	if later := srv.asked()[held:]; countExcept(later, "probe") != 0 {
		t.Fatalf("later searches asked %q (only the background probe may ask)", later)
	}
	if logged := r.log.String(); strings.Contains(logged, testAPIKey) || !strings.Contains(logged, "embeddings endpoint failing") {
		t.Fatalf("log: %s", logged)
	}
}

// countExcept counts the texts other than skip.
func countExcept(texts []string, skip string) int {
	n := 0
	for _, x := range texts {
		if x != skip {
			n++
		}
	}
	return n
}

// TestEmbeddedTextNamesTheServer: what is embedded for a tool is its
// server's title (the name a user says: "Linear", not the key "pm"), its
// name in words, camelCase cut, and only its description's first sentence;
// a tool whose definition did not change is not asked again after a reload.
func TestEmbeddedTextNamesTheServer(t *testing.T) {
	srv := startEmbedServer(t)
	pm := registry.LayerID{Kind: mcpKind, Name: "pm"}
	e := NewEmbedder(EmbedOptions{URL: srv.url, Model: "test",
		Servers: func() map[string]ServerInfo {
			return map[string]ServerInfo{pm.String(): {Name: "linear", Title: "Linear"}}
		}})
	t.Cleanup(e.Close)
	r := registry.New()
	create := mkTool(t, "pm_createIssue", "Create a new issue. Needs a team; see getTeams for their ids.", "")
	if err := r.Replace(pm, []tool.Tool{create}); err != nil {
		t.Fatal(err)
	}
	if err := r.Replace(registry.LayerID{Kind: mcpKind, Name: "maps"}, []tool.Tool{mkTool(t, "maps_geocode", "Address to coordinates.", "")}); err != nil {
		t.Fatal(err)
	}
	first := r.Snapshot()
	e.Update(first)
	waitFor(t, "the tools' vectors", func() bool { return Build(first, All, nil).vectorsOf(e) != nil })
	want := []string{"maps: maps geocode: Address to coordinates.", "Linear: pm create Issue: Create a new issue."} // in name order
	if got := srv.asked(); !slices.Equal(got, want) {
		t.Fatalf("embedded %q, want %q", got, want)
	}
	// A reload that changes only the maps tool asks for it alone.
	if err := r.Replace(registry.LayerID{Kind: mcpKind, Name: "maps"}, []tool.Tool{mkTool(t, "maps_geocode", "An address to coordinates.", "")}); err != nil {
		t.Fatal(err)
	}
	second := r.Snapshot()
	e.Update(second)
	waitFor(t, "the changed tool's vector", func() bool { return Build(second, All, nil).vectorsOf(e) != nil })
	if got := srv.asked()[len(want):]; fmt.Sprint(got) != "[maps: maps geocode: An address to coordinates.]" {
		t.Fatalf("after the reload embedded %q, want the changed tool alone", got)
	}
}

// TestEmbeddingsPrefixesAndWeight: the configured prefixes reach the
// endpoint — every tool's text after DocumentPrefix, the query after
// QueryPrefix, as retrieval-trained models (nomic, e5, bge) are trained —
// and Weight decides the fusion: a query whose words name one tool
// (repo_list_issues) while its meaning is another's (repo_fork, "duplicate
// them") gets the lexical answer first at the default weight, the
// semantic one at weight 4.
func TestEmbeddingsPrefixesAndWeight(t *testing.T) {
	srv := startEmbedServer(t)
	snap := embedCatalog(t)
	first := func(weight float64) string {
		e := NewEmbedder(EmbedOptions{URL: srv.url, Model: "test", QueryTimeout: 5 * time.Second,
			QueryPrefix: "search_query: ", DocumentPrefix: "search_document: ", Weight: weight})
		defer e.Close()
		c := &Cache{Embedder: e}
		e.Update(snap)
		waitFor(t, "the tools' vectors", func() bool { return c.For(snap, All).vectorsOf(e) != nil })
		hits := c.For(snap, All).Search("listing them, then duplicate duplicate copy", 3, nil).Hits
		if len(hits) == 0 {
			t.Fatalf("weight %g: no hits", weight)
		}
		for _, h := range hits {
			t.Logf("weight %g: %s %.4f %s", weight, h.Entry.Tool.Name, h.Score, h.Reason)
		}
		return hits[0].Entry.Tool.Name
	}
	if got := first(0); got != "repo_list_issues" {
		t.Fatalf("at the default weight %q ranks first, want the lexical answer repo_list_issues", got)
	}
	if got := first(10); got != "repo_fork" {
		t.Fatalf("at weight 10 %q ranks first, want the semantic answer repo_fork", got)
	}
	var docs, queries int
	for _, in := range srv.asked() {
		switch {
		case strings.HasPrefix(in, "search_document: "):
			docs++
		case in == "search_query: listing them, then duplicate duplicate copy":
			queries++
		default:
			t.Errorf("asked %q: neither a prefixed tool text nor the prefixed query", in)
		}
	}
	if docs != 2*len(snap.Entries()) || queries != 2 {
		t.Fatalf("asked %d tool texts and %d queries, want %d and 2", docs, queries, 2*len(snap.Entries()))
	}
}
