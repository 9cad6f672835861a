package nodeexample_test

import (
	"testing"

	"github.com/toolnexus/toolnexus/internal/testutil"
)

// TestGeneratedCodeIsFresh regenerates the TypeScript from proto/ with the
// pinned plugin into a temporary directory and compares it with the
// committed examples/node/gen, so a proto change cannot leave the Node
// client behind. Fix a failure with:
//
//	go tool -modfile=tools/go.mod buf generate --template buf.gen.ts.yaml
func TestGeneratedCodeIsFresh(t *testing.T) {
	requireNode(t)
	if testing.Short() {
		t.Skip("-short: skipping the buf run")
	}
	testutil.CheckGenerated(t, "buf.gen.ts.yaml", "examples/node/gen", nil)
}
