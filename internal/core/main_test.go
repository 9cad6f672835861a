package core_test

import (
	"testing"

	"go.uber.org/goleak"
)

// A closed core leaves nothing running: sources, the session janitor, the
// executor's subscription and the sandbox helpers all end with Close.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
