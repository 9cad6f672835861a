package deploy_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The dashboard test runs a real server in-process.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
