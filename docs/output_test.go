package docs_test

import (
	"slices"
	"testing"
)

// outputChecks compare a block marked <!-- output: NAME --> with what the
// server says; each gets the block's text.
var outputChecks = map[string]func(t *testing.T, doc string){}

func outputNames() []string {
	var out []string
	for k := range outputChecks {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Every block marked as output is what the server says.
func TestOutputBlocksAreWhatTheServerSays(t *testing.T) {
	for _, b := range allBlocks(t) {
		if b.marker != "output" {
			continue
		}
		check := outputChecks[b.arg]
		if check == nil {
			continue // TestEveryBlockIsRunOrMarked names it
		}
		t.Run(b.String(), func(t *testing.T) { check(t, b.text) })
	}
}
