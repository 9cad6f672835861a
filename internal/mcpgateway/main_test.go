package mcpgateway_test

import (
	"testing"

	"github.com/toolnexus/toolnexus/internal/testutil/testmain"
)

// Every gateway a test starts ends its sessions and its registry watcher
// when closed, and the core behind it its sources.
func TestMain(m *testing.M) {
	testmain.WithToolChildren(m)
}
