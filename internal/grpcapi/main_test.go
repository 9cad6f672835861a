package grpcapi_test

import (
	"testing"

	"github.com/toolnexus/toolnexus/internal/codemode"
	"github.com/toolnexus/toolnexus/internal/sandbox"

	"go.uber.org/goleak"
)

// Every server a test starts stops with it, and every core it runs over
// closes its sources.
func TestMain(m *testing.M) {
	codemode.EnterChild() // run_code's interpreter is this binary too
	sandbox.EnterHelper() // commands in these tests are sandboxed: this binary is also their helper
	goleak.VerifyTestMain(m)
}
