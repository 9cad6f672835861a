package a2a_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The source runs HTTP clients and the node tests run a child process;
// nothing may outlive a test.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
