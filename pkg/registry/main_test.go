package registry_test

import (
	"log/slog"
	"testing"

	"go.uber.org/goleak"
)

// Watchers hand changes over channels; goleak proves no test leaves a
// goroutine behind. Keep the shadowing warnings out of the test output.
func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.DiscardHandler))
	goleak.VerifyTestMain(m)
}
