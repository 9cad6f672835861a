package grpcapi_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every server a test starts stops with it, and every core it runs over
// closes its sources.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
