package server_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/toolnexus/toolnexus/pkg/server"
)

// withoutEntryEnv makes this test binary a program that forgot
// EnterSandboxHelper (TestWithoutTheSandboxHelperEntryNewRefuses).
const withoutEntryEnv = "TN_TEST_WITHOUT_HELPER_ENTRY"

// TestMain makes this test binary the sandbox helper of the servers its
// tests start (they re-execute it), and checks that every server the
// tests close leaves no goroutine behind.
func TestMain(m *testing.M) {
	if os.Getenv(withoutEntryEnv) == "1" {
		os.Exit(newWithoutEntry())
	}
	server.EnterSandboxHelper()
	goleak.VerifyTestMain(m)
}

// newWithoutEntry is main of a program that builds its server with New
// but never called EnterSandboxHelper.
func newWithoutEntry() int {
	srv, err := server.New(server.Options{Listen: "127.0.0.1:0", MetricsListen: "-", MCPListen: "-", Workspace: os.Getenv("TN_TEST_WORKSPACE")})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	_ = srv.Shutdown(context.Background())
	fmt.Fprintln(os.Stderr, "started")
	return 0
}

// A program that embeds the server but never calls EnterSandboxHelper
// would, re-executed as the sandbox's helper, run its own main again. New
// refuses to start it instead, naming the call to add, rather than run a
// model's commands less confined.
func TestWithoutTheSandboxHelperEntryNewRefuses(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), withoutEntryEnv+"=1", "TN_TEST_WORKSPACE="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if strings.Contains(string(out), "started") {
		t.Skipf("this kernel gives the sandbox no helper to start (no user and PID namespaces): %s", out)
	}
	if err == nil || !strings.Contains(string(out), "server.EnterSandboxHelper()") {
		t.Fatalf("New without the helper entry: err=%v, output:\n%s", err, out)
	}
}
