package core_test

import (
	"testing"

	"github.com/toolnexus/toolnexus/internal/codemode"
	"github.com/toolnexus/toolnexus/internal/sandbox"

	"go.uber.org/goleak"
)

// A closed core leaves nothing running: sources, the session janitor, the
// executor's subscription and the sandbox helpers all end with Close.
func TestMain(m *testing.M) {
	sandbox.EnterHelper() // commands in these tests are sandboxed: this binary is also their helper
	codemode.EnterChild() // and run_code's interpreter
	goleak.VerifyTestMain(m)
}
