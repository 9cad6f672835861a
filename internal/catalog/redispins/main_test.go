package redispins_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The clients' health checks end with them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
