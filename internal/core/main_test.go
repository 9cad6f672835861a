package core_test

import (
	"testing"

	"github.com/toolnexus/toolnexus/internal/testutil/testmain"
)

// A closed core leaves nothing running: sources, the session janitor, the
// executor's subscription and the sandbox helpers all end with Close.
func TestMain(m *testing.M) {
	testmain.WithToolChildren(m)
}
