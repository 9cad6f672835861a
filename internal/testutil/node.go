package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// NodeE2E finds node and the e2e/node install (the official TypeScript MCP
// SDK and the other npm peers); it skips when they are missing, unless
// TOOLNEXUS_REQUIRE_E2E=1, which makes it fail instead.
func NodeE2E(t testing.TB) (node, nodeDir string) {
	t.Helper()
	missing := func(what string) {
		t.Helper()
		if os.Getenv("TOOLNEXUS_REQUIRE_E2E") == "1" {
			t.Fatalf("%s; TOOLNEXUS_REQUIRE_E2E=1 requires it (run npm ci --prefix e2e/node)", what)
		}
		t.Skipf("%s; skipping (run npm ci --prefix e2e/node, or set TOOLNEXUS_REQUIRE_E2E=1 to fail instead)", what)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not on PATH")
	}
	nodeDir = filepath.Join(RepoRoot(t), "e2e", "node")
	if _, err := os.Stat(filepath.Join(nodeDir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		missing("e2e/node/node_modules/@modelcontextprotocol/sdk is not installed")
	}
	return node, nodeDir
}

// RepoRoot is the repository's root: the nearest directory above the
// test's own that holds go.mod.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// EverythingServer is the entry point of @modelcontextprotocol/server-
// everything in e2e/node, a real third-party MCP server that asks for
// elicitation and sampling mid-call; it skips when it or node is missing,
// unless TOOLNEXUS_REQUIRE_E2E=1.
func EverythingServer(t testing.TB) string {
	t.Helper()
	entry := filepath.Join(RepoRoot(t), "e2e", "node", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	_, statErr := os.Stat(entry)
	_, nodeErr := exec.LookPath("node")
	if statErr != nil || nodeErr != nil {
		if os.Getenv("TOOLNEXUS_REQUIRE_E2E") == "1" {
			t.Fatalf("server-everything not installed (run make e2e-deps): %v %v", statErr, nodeErr)
		}
		t.Skip("npm peers not installed; run `make e2e-deps` (CI sets TOOLNEXUS_REQUIRE_E2E=1)")
	}
	return entry
}
