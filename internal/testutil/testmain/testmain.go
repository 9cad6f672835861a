// Package testmain is the TestMain of a test binary that is also the
// children the code under test starts: the sandbox's helper and
// run_code's interpreter, which re-execute this very binary (as the server
// re-executes itself in production, see server.EnterSandboxHelper). The
// packages below pkg/server whose tests run sandboxed commands and
// run_code each wrote these lines out; here they are once.
//
// It lives apart from internal/testutil so that the many tests importing
// that package do not link the sandbox and the code-mode interpreter.
package testmain

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/toolnexus/toolnexus/internal/codemode"
	"github.com/toolnexus/toolnexus/internal/sandbox"
)

// WithToolChildren turns this process into the sandbox helper or the
// run_code child when it was started as one (and then never returns);
// otherwise it runs the tests and fails the binary on a goroutine left
// running after them.
func WithToolChildren(m *testing.M) {
	codemode.EnterChild()
	sandbox.EnterHelper()
	goleak.VerifyTestMain(m)
}
