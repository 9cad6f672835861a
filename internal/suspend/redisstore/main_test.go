package redisstore_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The stores' subscriptions and the clients' health checks end with them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
