package cluster_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test here ends what it starts: no goroutine outlives the package
// (the health checks, the reload subscription, go-redis's pools).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
