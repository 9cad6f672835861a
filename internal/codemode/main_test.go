package codemode

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	EnterChild()
	goleak.VerifyTestMain(m)
	os.Exit(0)
}
