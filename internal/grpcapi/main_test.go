package grpcapi_test

import (
	"testing"

	"github.com/toolnexus/toolnexus/internal/sandbox"

	"go.uber.org/goleak"
)

// Every server a test starts stops with it, and every core it runs over
// closes its sources.
func TestMain(m *testing.M) {
	sandbox.EnterHelper() // commands in these tests are sandboxed: this binary is also their helper
	goleak.VerifyTestMain(m)
}
