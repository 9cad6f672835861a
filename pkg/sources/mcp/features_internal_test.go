package mcp

import (
	"context"
	"testing"
)

// An upstream whose resources/list never ends (or lists millions) is read
// up to maxFeatureItems and no further: its listing cannot exhaust memory.
func TestCollectStopsAtTheCap(t *testing.T) {
	t.Parallel()
	asked := 0
	endless := func(yield func(int, error) bool) {
		for i := 0; ; i++ {
			asked++
			if !yield(i, nil) {
				return
			}
		}
	}
	got, err := collect[int](context.Background(), endless)
	if err != nil || len(got) != maxFeatureItems || asked != maxFeatureItems {
		t.Fatalf("collect = %d items (asked %d), %v; want %d", len(got), asked, err, maxFeatureItems)
	}
}
