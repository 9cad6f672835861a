package htmltext_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test here ends what it starts: no goroutine outlives the package.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
