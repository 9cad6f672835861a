package deploy_test

import (
	"testing"

	"github.com/toolnexus/toolnexus/pkg/server"

	"go.uber.org/goleak"
)

// The dashboard test runs a real server in-process.
func TestMain(m *testing.M) {
	server.EnterSandboxHelper() // this test binary is also the sandbox helper of the servers it starts
	goleak.VerifyTestMain(m)
}
