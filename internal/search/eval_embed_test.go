package search

import (
	"encoding/json"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// The semantic side measured on the same splits as the lexical ranking:
// a real embeddings model (the Universal Sentence Encoder, served by the
// npm peer e2e/embeddings over OpenAI's /v1/embeddings), asked through the
// Embedder exactly as a deployment's search.embeddings would be.

// evalEndpoint is the endpoint the evaluation measures: the peer (the
// Universal Sentence Encoder), or, when SEARCH_EVAL_EMBEDDINGS_URL is set,
// any OpenAI-compatible endpoint a deployment would configure — a
// retrieval-trained model on Ollama, TEI, vLLM or a hosted API — with
// SEARCH_EVAL_EMBEDDINGS_MODEL, _KEY, _QUERY_PREFIX, _DOCUMENT_PREFIX and
// _WEIGHT as search.embeddings' model, apiKey, queryPrefix,
// documentPrefix and weight. The floors hold for the peer alone.
func evalEndpoint(t *testing.T) (opts EmbedOptions, peer bool) {
	t.Helper()
	url := os.Getenv("SEARCH_EVAL_EMBEDDINGS_URL")
	if url == "" {
		return EmbedOptions{URL: testutil.EmbeddingsPeer(t), Model: testutil.EmbeddingsModel}, true
	}
	opts = EmbedOptions{URL: url, Model: os.Getenv("SEARCH_EVAL_EMBEDDINGS_MODEL"), APIKey: os.Getenv("SEARCH_EVAL_EMBEDDINGS_KEY"),
		QueryPrefix: os.Getenv("SEARCH_EVAL_EMBEDDINGS_QUERY_PREFIX"), DocumentPrefix: os.Getenv("SEARCH_EVAL_EMBEDDINGS_DOCUMENT_PREFIX")}
	if w := os.Getenv("SEARCH_EVAL_EMBEDDINGS_WEIGHT"); w != "" {
		var err error
		if opts.Weight, err = strconv.ParseFloat(w, 64); err != nil || opts.Weight <= 0 {
			t.Fatalf("SEARCH_EVAL_EMBEDDINGS_WEIGHT=%q: want a weight above 0", w)
		}
	}
	t.Logf("measuring %s (model %q, query prefix %q, document prefix %q, weight %g; 0 = the default)",
		opts.URL, opts.Model, opts.QueryPrefix, opts.DocumentPrefix, opts.Weight)
	return opts, false
}

// evalEmbedder is an Embedder on the endpoint opts name that has the
// vectors of every split's tools, embedding text as textOf says.
func evalEmbedder(t *testing.T, opts EmbedOptions, textOf func(*tool.Tool, string) string, splits []evalSplit) *Embedder {
	t.Helper()
	servers := map[string]ServerInfo{}
	for _, s := range splits {
		maps.Copy(servers, s.servers)
	}
	opts.QueryTimeout = 5 * time.Minute
	opts.Servers = func() map[string]ServerInfo { return servers }
	e := NewEmbedder(opts)
	t.Cleanup(e.Close)
	e.textOf = textOf
	for _, s := range splits {
		e.Update(s.snap)
		ix := build(s.snap, All, &defaultRanking, s.servers, nil)
		deadline := time.Now().Add(10 * time.Minute)
		for ix.vectorsOf(e) == nil {
			if e.down.Load() || time.Now().After(deadline) {
				t.Fatalf("%s: the embeddings peer did not embed the catalog (down: %v)", s.name, e.down.Load())
			}
			time.Sleep(50 * time.Millisecond)
		}
		warmQueries(t, e, s)
	}
	return e
}

// evalView is the view key the evaluation's indexes search under.
const evalView = "eval"

// warmQueries asks the vectors of a split's tasks in one request, as the
// searches would one by one: the same cache, less time.
func warmQueries(t *testing.T, e *Embedder, s evalSplit) {
	t.Helper()
	var texts []string
	var prefixed []string
	for _, task := range s.tasks {
		texts = append(texts, task.Task)
		prefixed = append(prefixed, e.opts.QueryPrefix+task.Task)
	}
	vecs, err := e.embed(e.ctx, prefixed)
	if err != nil {
		t.Fatal(err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for i, v := range vecs {
		e.queries[evalView+"\x00"+texts[i]] = v
	}
}

// fusedRanker is the ranking rk fused with the embedder's.
func fusedRanker(s evalSplit, rk *ranking, e *Embedder) ranker {
	ix := build(s.snap, All, rk, s.servers, nil)
	ix.embedder, ix.viewKey = e, evalView
	return func(q string, k int) []string { return names(ix.Search(q, k, nil).Hits) }
}

// semanticRanker is the embedder's ranking alone.
func semanticRanker(s evalSplit, e *Embedder) ranker {
	rk := defaultRanking
	rk.fusion.semanticDepth = s.snap.Len()
	ix := build(s.snap, All, &rk, s.servers, nil)
	ix.embedder, ix.viewKey = e, evalView
	return func(q string, k int) []string {
		docs, _ := ix.semanticRank(q)
		var out []string
		for _, d := range docs[:min(k, len(docs))] {
			out = append(out, ix.entries[d].Tool.Name)
		}
		return out
	}
}

// embedTexts are what may be embedded for a tool, measured on the tuning
// split (SEARCH_EVAL_FUSION=1); the first is embedText's.
var embedTexts = []struct {
	name string
	of   func(t *tool.Tool, server string) string
}{
	{"server + name + first sentence", embedText},
	{"name + first sentence", func(t *tool.Tool, _ string) string { return embedText(t, "") }},
	{"name + description", func(t *tool.Tool, _ string) string { return nameWith(t, t.Description) }},
	{"description alone", func(t *tool.Tool, _ string) string { return truncateBytes(t.Description, maxEmbedText) }},
	{"name + description + parameter names", func(t *tool.Tool, _ string) string {
		return nameWith(t, t.Description+" ("+strings.Join(paramNames(t), ", ")+")")
	}},
}

func nameWith(t *tool.Tool, text string) string {
	return truncateBytes(strings.Join(nameWords(t.Name), " ")+": "+text, maxEmbedText)
}

// paramNames are a tool's top-level parameter names, in words.
func paramNames(t *tool.Tool) []string {
	var n schemaNode
	_ = json.Unmarshal(t.InputSchema, &n)
	var out []string
	for p := range n.Properties {
		out = append(out, strings.Join(nameWords(p), " "))
	}
	slices.Sort(out)
	return out
}

// TestEmbeddingsOnUnseenCatalogs reports recall@1, recall@5 and MRR of the
// lexical ranking, of the embeddings alone and of the two fused, in the same
// run, on every split.
func TestEmbeddingsOnUnseenCatalogs(t *testing.T) {
	if testing.Short() {
		t.Skip("embeds every split's catalog: about two minutes of CPU")
	}
	opts, peer := evalEndpoint(t)
	splits := evalSplits(t)
	e := evalEmbedder(t, opts, embedText, splits)
	for _, s := range splits {
		lex, sem, fused := measure(s, ourRanker(s, &defaultRanking)), measure(s, semanticRanker(s, e)), measure(s, fusedRanker(s, &defaultRanking, e))
		t.Logf("%s: %d tools, %d tasks", s.name, s.snap.Len(), len(s.tasks))
		t.Logf("  %-40s %s", "lexical", lex)
		t.Logf("  %-40s %s", "embeddings alone", sem)
		t.Logf("  %-40s %s", "fused (RRF)", fused)
		if showMisses(s) {
			for _, m := range fused.misses {
				t.Log("  ", m)
			}
		}
		if floor := fusedFloors[s.name]; peer && (fused.at1 < floor[0] || fused.at5 < floor[1]) {
			t.Errorf("%s: fused %s; the floors are recall@1 %.2f, recall@5 %.2f", s.name, fused, floor[0], floor[1])
		}
	}
}

// TestEmbeddingsFusionSweep (SEARCH_EVAL_FUSION=1) measures the fusion's
// choices — RRF's k, the semantic ranking's weight and depth, what text is
// embedded — on the tuning split only, where they were chosen.
func TestEmbeddingsFusionSweep(t *testing.T) {
	if os.Getenv("SEARCH_EVAL_FUSION") == "" {
		t.Skip("set SEARCH_EVAL_FUSION=1 to measure the fusion's parameters on the tuning split")
	}
	opts, _ := evalEndpoint(t)
	opts.Weight = 0 // the sweep sets the ranking's own
	tune := loadSplit(t, "tune.json", false)
	for _, text := range embedTexts {
		if only := os.Getenv("SEARCH_EVAL_TEXT"); only != "" && !strings.Contains(text.name, only) {
			continue
		}
		e := evalEmbedder(t, opts, text.of, []evalSplit{tune})
		t.Logf("embedding %s: alone %s", text.name, measure(tune, semanticRanker(tune, e)))
		for _, k := range []float64{2, 5, 10, 60} {
			for _, w := range []float64{0.1, 0.25, 0.5, 1} {
				for _, depth := range []int{3, 5, 10, 50} {
					rk := defaultRanking
					rk.fusion = fusion{k: k, lexical: 1, semantic: w, lexicalDepth: 50, semanticDepth: depth}
					t.Logf("  k %-3g semantic weight %-4g depth %-3d %s", k, w, depth, measure(tune, fusedRanker(tune, &rk, e)))
				}
			}
		}
	}
}

// evalSplits are the splits both evaluations measure, the tuning split
// first.
func evalSplits(t *testing.T) []evalSplit {
	return []evalSplit{loadSplit(t, "tune.json", false), loadSplit(t, "heldout.json", true), loadSplit(t, "fresh.json", true),
		loadSplit(t, "blind.json", true), loadSplit(t, "sealed.json", true),
		loadSplit(t, "final.json", true), loadSplit(t, "heldback.json", true), writtenSplit(t)}
}

// fusedFloors are recall@1 and recall@5 floors of the fused ranking, a
// little under what it reaches with the Universal Sentence Encoder
// (BENCHMARKS.md, "Tool search with embeddings").
var fusedFloors = map[string][2]float64{
	"tune": {0.46, 0.87}, "heldout": {0.50, 0.76}, "fresh": {0.45, 0.72}, "blind": {0.29, 0.59}, "sealed": {0.22, 0.49}, "final": {0.32, 0.44},
	"heldback":     {0.34, 0.66},
	"written-1005": {0.89, 0.94},
}
