package mcpgateway_test

import (
	"testing"

	"github.com/toolnexus/toolnexus/internal/codemode"
	"github.com/toolnexus/toolnexus/internal/sandbox"

	"go.uber.org/goleak"
)

// Every gateway a test starts ends its sessions and its registry watcher
// when closed, and the core behind it its sources.
func TestMain(m *testing.M) {
	codemode.EnterChild() // run_code's interpreter is this binary too
	sandbox.EnterHelper() // commands in these tests are sandboxed: this binary is also their helper
	goleak.VerifyTestMain(m)
}
