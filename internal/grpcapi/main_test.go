package grpcapi_test

import (
	"testing"

	"github.com/toolnexus/toolnexus/internal/testutil/testmain"
)

// Every server a test starts stops with it, and every core it runs over
// closes its sources.
func TestMain(m *testing.M) {
	testmain.WithToolChildren(m)
}
