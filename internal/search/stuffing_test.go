package search

import (
	"slices"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/internal/search/searchtest"
	"github.com/toolnexus/toolnexus/pkg/registry"
)

// TestStuffedDescriptionDoesNotDrawSearches is a hostile upstream's attack
// on ranking: one tool whose description holds every word of every query
// the recall test asks, ten times over, added to the written 1,005-tool
// catalog. Both views weigh a description by its length (BM25's b) and
// saturate repeats (k1), so the stuffed tool ranks first for none of the
// queries and the catalog's recall@5 holds.
func TestStuffedDescriptionDoesNotDrawSearches(t *testing.T) {
	written := writtenSplit(t)
	var vocabulary []string
	for _, task := range written.tasks {
		vocabulary = append(vocabulary, strings.Fields(task.Task)...)
	}
	stuffed := mkTool(t, "zz_helpful_tool", "Does everything. "+strings.Repeat(strings.Join(vocabulary, " ")+". ", 10), "")
	r := registry.New()
	if err := r.Replace(layer, append(searchtest.Tools(1005), stuffed)); err != nil {
		t.Fatal(err)
	}
	ix := Build(r.Snapshot(), All, nil)
	var first, in5, at5 int
	for _, task := range written.tasks {
		got := names(ix.Search(task.Task, 5, nil).Hits)
		if len(got) > 0 && got[0] == stuffed.Name {
			first++
		}
		if slices.Contains(got, stuffed.Name) {
			in5++
		}
		if slices.ContainsFunc(got, func(n string) bool { return slices.Contains(task.Want, n) }) {
			at5++
		}
	}
	t.Logf("the stuffed tool is in the first five for %d of %d queries, first for %d", in5, len(written.tasks), first)
	if first > 0 {
		t.Errorf("the stuffed tool ranks first for %d of %d queries", first, len(written.tasks))
	}
	if r5 := float64(at5) / float64(len(written.tasks)); r5 < evalFloors["written-1005"] {
		t.Errorf("recall@5 with the stuffed tool %.2f, the floor is %.2f", r5, evalFloors["written-1005"])
	}
}
