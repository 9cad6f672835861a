package registry_test

import (
	"log/slog"
	"testing"

	"go.uber.org/goleak"
)

// Execute runs tools on the caller's goroutine and watchers hand changes over
// channels; goleak proves no test leaves a goroutine behind. Panic stacks are
// logged by design; keep them out of the test output.
func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.DiscardHandler))
	goleak.VerifyTestMain(m)
}
