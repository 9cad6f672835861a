package otlp

import (
	"testing"

	"go.uber.org/goleak"
)

// Exporters run batchers in the background; goleak proves every test
// shuts its provider down.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
