package search

import (
	"testing"

	"go.uber.org/goleak"
)

// The embedder's worker ends when it is closed; every test closes its own.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
