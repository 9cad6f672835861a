package mcpgateway_test

import (
	"testing"

	"github.com/toolnexus/toolnexus/internal/sandbox"

	"go.uber.org/goleak"
)

// Every gateway a test starts ends its sessions and its registry watcher
// when closed, and the core behind it its sources.
func TestMain(m *testing.M) {
	sandbox.EnterHelper() // commands in these tests are sandboxed: this binary is also their helper
	goleak.VerifyTestMain(m)
}
