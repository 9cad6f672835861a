package config_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Parsing reads files and the environment and must start nothing; goleak
// proves it.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
