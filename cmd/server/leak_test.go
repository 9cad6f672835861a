package main_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The tests run the server binary as a child process, read its output and
// wait for it; goleak proves no test leaves a reader goroutine behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
