package grpcapi

import (
	"testing"

	"go.uber.org/goleak"
)

// The front-end's tests serve real gRPC; goleak proves every stream and
// server goroutine ends with its test.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
