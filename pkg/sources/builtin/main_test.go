package builtin_test

import (
	"testing"

	"go.uber.org/goleak"
)

// bash starts processes and goroutines; none may outlive a test.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
