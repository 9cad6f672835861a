package egress_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The proxy starts a goroutine per connection and per relay direction:
// goleak proves each ends when its listener closes.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
