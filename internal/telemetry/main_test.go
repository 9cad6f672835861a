package telemetry_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Tracing providers export in the background; goleak proves every test
// shuts its provider down.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
