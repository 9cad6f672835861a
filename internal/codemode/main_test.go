package codemode

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/toolnexus/toolnexus/internal/sandbox"
)

// box is the sandbox the tests' interpreters run in, as the server's do
// (nil where the kernel allows none).
var box *sandbox.Sandbox

func TestMain(m *testing.M) {
	EnterChild()
	sandbox.EnterHelper() // this binary is also the sandbox's helper
	goleak.VerifyTestMain(withBox{m})
	os.Exit(0)
}

// withBox makes the shared sandbox before the tests and closes it (ending
// its helpers and their goroutines) before goleak looks.
type withBox struct{ m *testing.M }

func (w withBox) Run() int {
	b, err := sandbox.New(sandbox.ModeAuto)
	if err == nil {
		box = b
	}
	code := w.m.Run()
	box.Close()
	return code
}
