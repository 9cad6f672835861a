package debug_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The debug tools sleep and panic on the caller's goroutine; goleak proves
// none is left behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
