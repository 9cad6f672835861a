package main_test

import (
	"testing"

	"github.com/toolnexus/toolnexus/pkg/server"

	"go.uber.org/goleak"
)

// The tests run the server binary as a child process, read its output and
// wait for it; goleak proves no test leaves a reader goroutine behind.
func TestMain(m *testing.M) {
	server.EnterSandboxHelper() // this test binary is also the sandbox helper of the servers it starts
	goleak.VerifyTestMain(m)
}
