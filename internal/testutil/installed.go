package testutil

import (
	"os"
	"os/exec"
	"testing"
)

// Installed finds the program Debian's package pkg installs, trying each
// of names (a name on PATH, or an absolute path). Without it the test
// skips, saying what it skips; with TOOLNEXUS_REQUIRE_E2E=1 (as CI sets,
// where .ci/run installs pkg) it fails instead.
func Installed(t testing.TB, pkg, skipping string, names ...string) string {
	t.Helper()
	for _, p := range names {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if os.Getenv("TOOLNEXUS_REQUIRE_E2E") == "1" {
		t.Fatalf("%s is not installed; TOOLNEXUS_REQUIRE_E2E=1 requires it (apt-get install %s; .ci/run does)", pkg, pkg)
	}
	t.Skipf("%s is not installed: skipping %s (apt-get install %s, or set TOOLNEXUS_REQUIRE_E2E=1 to fail instead)", pkg, skipping, pkg)
	return ""
}
