package audit_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The audit log writes from many callers at once; goleak proves no test
// leaves a goroutine (or a file writer) behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
