package sources_test

import (
	"testing"

	"go.uber.org/goleak"
)

// goleak proves no test leaves a goroutine behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
