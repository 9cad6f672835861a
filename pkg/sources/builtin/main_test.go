package builtin_test

import (
	"testing"

	"github.com/toolnexus/toolnexus/internal/sandbox"

	"go.uber.org/goleak"
)

// bash starts processes and goroutines; none may outlive a test.
func TestMain(m *testing.M) {
	sandbox.EnterHelper() // commands in these tests are sandboxed: this binary is also their helper
	goleak.VerifyTestMain(m)
}
