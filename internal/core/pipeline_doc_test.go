package core_test

import (
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/toolnexus/toolnexus/internal/core"
)

// TestPipelineDocMatchesCode: docs/pipeline.md's table of steps is the
// code's list, entry for entry, in order.
func TestPipelineDocMatchesCode(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/pipeline.md")
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, m := range regexp.MustCompile("(?m)^\\| (\\d+) \\| `([^`]+)` \\|").FindAllSubmatch(doc, -1) {
		documented = append(documented, string(m[2]))
	}
	if code := core.Steps(); !slices.Equal(documented, code) {
		t.Fatalf("docs/pipeline.md lists the steps\n  %q\nthe code's list is\n  %q", documented, code)
	}
}
