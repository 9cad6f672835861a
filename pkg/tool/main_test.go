package tool_test

import (
	"log/slog"
	"testing"

	"go.uber.org/goleak"
)

// Tools are told to stop through their context; goleak proves the tests
// leave no tool goroutine behind. Panic stacks are logged by design; keep
// them out of the test output (TestPanicStackGoesToLogOnly checks them).
func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.DiscardHandler))
	goleak.VerifyTestMain(m)
}
