package catalog_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The recheck loop ends with Close.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
