package core_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The core starts sources, watchers and executors and must end them all
// on Close; goleak proves no test leaves a goroutine behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
