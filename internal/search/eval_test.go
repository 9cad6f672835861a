package search

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/toolnexus/toolnexus/internal/search/searchtest"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// The evaluation on unseen catalogs (testdata/unseen/README.md): tool
// definitions of npm MCP servers this ranking was never written for, and
// tasks in a user's words committed before any ranking ran on them.

type evalTask struct {
	Task string   `json:"task"`
	Want []string `json:"want"`
}

type evalSplit struct {
	name    string
	snap    *registry.Snapshot
	servers map[string]ServerInfo // by LayerID.String()
	tasks   []evalTask
	heldOut bool // only totals are shown: its tasks are not read while tuning
}

// listedServer is what listmcp wrote for one server.
type listedServer struct {
	Key        string `json:"key"`
	ServerInfo struct {
		Name, Title, Description string
	} `json:"serverInfo"`
	Tools []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"inputSchema"`
	} `json:"tools"`
}

var mcpKind = registry.Kind{Name: "mcp", Precedence: 7}

func loadSplit(t testing.TB, file string, heldOut bool) evalSplit {
	t.Helper()
	var doc struct {
		Catalog []string   `json:"catalog"`
		Tasks   []evalTask `json:"tasks"`
	}
	readJSON(t, filepath.Join("testdata", "unseen", file), &doc)
	r := registry.New()
	s := evalSplit{name: strings.TrimSuffix(file, ".json"), servers: map[string]ServerInfo{}, tasks: doc.Tasks, heldOut: heldOut}
	for _, key := range doc.Catalog {
		var l listedServer
		readJSON(t, filepath.Join("testdata", "unseen", "servers", key+".json"), &l)
		tools := make([]tool.Tool, 0, len(l.Tools))
		for _, lt := range l.Tools {
			tools = append(tools, mkTool(t, key+"_"+tool.Sanitize(lt.Name), lt.Description, string(lt.InputSchema)))
		}
		if err := r.Replace(registry.LayerID{Kind: mcpKind, Name: key}, tools); err != nil {
			t.Fatal(err)
		}
		s.servers[registry.LayerID{Kind: mcpKind, Name: key}.String()] = ServerInfo{Name: l.ServerInfo.Name, Title: l.ServerInfo.Title, Description: l.ServerInfo.Description}
	}
	s.snap = r.Snapshot()
	for _, task := range s.tasks {
		for _, w := range task.Want {
			if _, ok := s.snap.Lookup(w); !ok {
				t.Fatalf("%s: task %q wants %s, which the catalog does not have", file, task.Task, w)
			}
		}
	}
	return s
}

// writtenSplit is the 1,005 tools written for this project with those of
// the 50 recall queries (searchtest/queries.json) that want one of them;
// the others want tools of live npm servers, which pkg/server's recall
// test lists.
func writtenSplit(t testing.TB) evalSplit {
	t.Helper()
	var doc struct {
		Queries []struct{ Query, Want string }
	}
	readJSON(t, filepath.Join("searchtest", "queries.json"), &doc)
	snap := snapshotOf(t, searchtest.Tools(1005)...)
	s := evalSplit{name: "written-1005", snap: snap}
	for _, q := range doc.Queries {
		if _, ok := snap.Lookup(q.Want); ok {
			s.tasks = append(s.tasks, evalTask{Task: q.Query, Want: []string{q.Want}})
		}
	}
	return s
}

func readJSON(t testing.TB, file string, v any) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

// scores are one ranking's results on one split.
type scores struct {
	at1, at5, mrr float64
	misses        []string // tasks whose tool is not first, with what ranked
}

// ranker answers a task with tool names, best first.
type ranker func(query string, k int) []string

func measure(s evalSplit, rank ranker) scores {
	var sc scores
	for _, task := range s.tasks {
		got := rank(task.Task, 10)
		pos := slices.IndexFunc(got, func(n string) bool { return slices.Contains(task.Want, n) })
		if pos == 0 {
			sc.at1++
		}
		if pos >= 0 && pos < 5 {
			sc.at5++
		}
		if pos >= 0 {
			sc.mrr += 1 / float64(pos+1)
		}
		if pos != 0 {
			sc.misses = append(sc.misses, fmt.Sprintf("rank %d: %q wants %s; got %s", pos+1, task.Task, task.Want, strings.Join(got[:min(5, len(got))], ", ")))
		}
	}
	n := float64(len(s.tasks))
	sc.at1, sc.at5, sc.mrr = sc.at1/n, sc.at5/n, sc.mrr/n
	return sc
}

func (sc scores) String() string {
	return fmt.Sprintf("recall@1 %.2f  recall@5 %.2f  MRR %.2f", sc.at1, sc.at5, sc.mrr)
}

// ourRanker is a ranking of the split's whole catalog.
func ourRanker(s evalSplit, rk *ranking) ranker {
	ix := build(s.snap, All, rk, s.servers, nil)
	return func(q string, k int) []string { return names(ix.Search(q, k, nil).Hits) }
}

// ablation is the ranking less one of its parts.
type ablation struct {
	name string
	less func(rk *ranking)
}

func withAnalyzer(rk *ranking, change func(a *analyzer)) {
	a := *rk.an
	change(&a)
	rk.an = &a
	rk.related = sync.OnceValue(func() relatedTable { return parseRelated(&a) })
}

var ablations = []ablation{
	{"brands whole (GitHub, JavaScript)", func(rk *ranking) { withAnalyzer(rk, func(a *analyzer) { a.brands = false }) }},
	{"question words as stopwords", func(rk *ranking) { withAnalyzer(rk, func(a *analyzer) { a.stops = stopwordsBefore }) }},
	{"light Porter2 stemmer (date, site)", func(rk *ranking) { withAnalyzer(rk, func(a *analyzer) { a.stem = stemBefore }) }},
	{"abbreviations (PR, repo)", func(rk *ranking) { withAnalyzer(rk, func(a *analyzer) { a.abbrevs = nil }) }},
	{"server field", func(rk *ranking) { rk.servers = false }},
	{"product named in the query", func(rk *ranking) { rk.mention = 1 }},
	{"plain view fused (plain.go)", func(rk *ranking) { rk.plain.weight = 0 }},

	{"WordNet synonyms", func(rk *ranking) { rk.synonym = 0 }},
	{"WordNet derived forms", func(rk *ranking) { rk.derived = 0 }},
	{"software words (software.txt)", func(rk *ranking) { rk.software = 0 }},
	{"light verbs (take, give, get)", func(rk *ranking) { rk.light = 1 }},
}

// rankingBefore is the ranking before the evaluation on unseen catalogs:
// every part above off.
func rankingBefore() *ranking {
	rk := defaultRanking
	for _, a := range ablations {
		a.less(&rk)
	}
	rk.related = nil
	return &rk
}

// bm25Ranker is the baseline: plain BM25 (k1 1.2, b 0.75) over each tool's
// name and description as one text, cut at every character that is not a
// letter or a digit and lowercased; no stemming, no stop words, no fields.
func bm25Ranker(s evalSplit) ranker {
	type bdoc struct {
		name string
		tf   map[string]int
		len  int
	}
	cut := func(text string) []string {
		return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	}
	var docs []bdoc
	df := map[string]int{}
	total := 0
	for _, e := range s.snap.Entries() {
		d := bdoc{name: e.Tool.Name, tf: map[string]int{}}
		for _, w := range cut(e.Tool.Name + " " + e.Tool.Description) {
			if d.tf[w] == 0 {
				df[w]++
			}
			d.tf[w]++
			d.len++
		}
		total += d.len
		docs = append(docs, d)
	}
	n, avg := float64(len(docs)), float64(total)/float64(len(docs))
	return func(q string, k int) []string {
		var hits []Hit
		for _, d := range docs {
			var sc float64
			for _, w := range slices.Compact(slices.Sorted(slices.Values(cut(q)))) {
				tf := float64(d.tf[w])
				if tf == 0 {
					continue
				}
				c := float64(df[w])
				sc += math.Log(1+(n-c+0.5)/(c+0.5)) * tf * (k1 + 1) / (tf + k1*(1-0.75+0.75*float64(d.len)/avg))
			}
			if sc > 0 {
				hits = append(hits, Hit{Entry: &registry.Entry{Tool: &tool.Tool{Name: d.name}}, Score: sc})
			}
		}
		slices.SortStableFunc(hits, func(a, b Hit) int { return cmp.Compare(b.Score, a.Score) }) // docs are in name order
		return names(hits[:min(k, len(hits))])
	}
}

// TestRankingOnUnseenCatalogs reports recall@1, recall@5 and MRR of the
// ranking and of the BM25 baseline, in the same run, on the tuning split,
// the held-out, fresh, blind, sealed, final and held-back splits and the
// written 1,005-tool catalog.
// With SEARCH_EVAL_MISSES=1 it lists the tuning split's misses (never the
// other splits': those tasks are not read while tuning; see showMisses).
func TestRankingOnUnseenCatalogs(t *testing.T) {
	splits := evalSplits(t)
	for _, s := range splits {
		ours, before, base := measure(s, ourRanker(s, &defaultRanking)), measure(s, ourRanker(s, rankingBefore())), measure(s, bm25Ranker(s))
		t.Logf("%s: %d tools, %d tasks", s.name, s.snap.Len(), len(s.tasks))
		t.Logf("  %-40s %s", "ranking", ours)
		t.Logf("  %-40s %s", "ranking before (all parts below off)", before)
		t.Logf("  %-40s %s", "BM25 (name + description)", base)
		if os.Getenv("SEARCH_EVAL_ABLATIONS") != "" {
			for _, a := range ablations {
				rk := defaultRanking
				a.less(&rk)
				t.Logf("  %-40s %s", "without "+a.name, measure(s, ourRanker(s, &rk)))
			}
		}
		if showMisses(s) {
			for _, m := range ours.misses {
				t.Log("  ", m)
			}
		}
		// The ranking is held above BM25 where it was tuned. The splits first
		// read after every choice was made are measured, and held only to
		// their floors: there it is not reliably above BM25 (on the final
		// split it is below, BENCHMARKS.md), and to hold it there would be
		// to tune on them.
		if !readOnceSplits[s.name] && (ours.at5 < base.at5 || ours.mrr < base.mrr) {
			t.Errorf("%s: the ranking (%s) is below plain BM25 (%s)", s.name, ours, base)
		}
		if floor := evalFloors[s.name]; ours.at5 < floor {
			t.Errorf("%s: recall@5 %.2f, the floor is %.2f", s.name, ours.at5, floor)
		}
	}
}

// showMisses says whether to list a split's misses: SEARCH_EVAL_MISSES=1
// lists the tuning split's; =all every split's, to be read once, after the
// last change, to say what remains (never while tuning).
func showMisses(s evalSplit) bool {
	v := os.Getenv("SEARCH_EVAL_MISSES")
	return v == "all" || v != "" && !s.heldOut
}

// evalFloors are recall@5 floors a little under what the ranking reaches:
// a change that loses tasks must say so.
var evalFloors = map[string]float64{"tune": 0.84, "heldout": 0.74, "fresh": 0.71, "blind": 0.56, "sealed": 0.43, "final": 0.45, "heldback": 0.67, "written-1005": 0.95}

// readOnceSplits are the splits whose results were first read after every
// choice of the ranking was made: the measure of catalogs it never saw.
var readOnceSplits = map[string]bool{"blind": true, "sealed": true, "final": true, "heldback": true}
