package server_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// conformanceScenarios are the official MCP conformance suite's server
// scenarios about a server asking its client mid-call (and the schema
// keywords those requests and tools carry), run through /mcp.
var conformanceScenarios = []string{
	"tools-call-elicitation",
	"tools-call-sampling",
	"elicitation-sep1034-defaults",
	"elicitation-sep1330-enums",
	"json-schema-2020-12",
}

// TestMCPConformanceThroughGateway runs the official MCP conformance suite
// (@modelcontextprotocol/conformance, acting as the MCP client) against
// toolnexus's /mcp, with an MCP server on the TypeScript SDK behind it
// (testdata/conformance-upstream.mjs, prefix "" so the suite finds the tool
// names it expects). The upstream's elicitation and sampling requests are
// relayed to the suite's client and its answers back; every check of each
// scenario must pass. Skipped without node and the npm package, unless
// TOOLNEXUS_REQUIRE_E2E=1.
func TestMCPConformanceThroughGateway(t *testing.T) {
	nodeDir, err := filepath.Abs(filepath.Join("..", "..", "e2e", "node"))
	if err != nil {
		t.Fatal(err)
	}
	suite := filepath.Join(nodeDir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	node, nodeErr := exec.LookPath("node")
	if _, statErr := os.Stat(suite); nodeErr != nil || statErr != nil {
		if os.Getenv("TOOLNEXUS_REQUIRE_E2E") == "1" {
			t.Fatalf("node or e2e/node/node_modules/@modelcontextprotocol/conformance missing; TOOLNEXUS_REQUIRE_E2E=1 requires them (run npm ci in e2e/node)")
		}
		t.Skip("node or e2e/node/node_modules/@modelcontextprotocol/conformance missing; skipping the conformance suite")
	}
	upstream, err := filepath.Abs(filepath.Join("testdata", "conformance-upstream.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	g := startGateway(t, fmt.Sprintf(`{"builtins": false, "skills": [], "mcpServers": {"conformance": {
		"command": %q, "args": [%q, %q], "prefix": "", "timeout": 60000}}}`, node, upstream, nodeDir))

	// One after another: the upstream is one stdio session, and on its
	// protocol a server's request names no call, so toolnexus declines it
	// when several calls could have asked.
	for _, scenario := range conformanceScenarios {
		t.Run(scenario, func(t *testing.T) {
			dir := t.TempDir() // the suite writes results/ into its working directory
			// A bound for a wedged child, not a timing assertion.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, suite, "server", "--url", g.url, "--scenario", scenario)
			cmd.Dir = dir
			out, runErr := cmd.CombinedOutput()
			checks := conformanceChecks(out)
			if len(checks) == 0 {
				t.Fatalf("the suite reported no checks (%v):\n%s", runErr, out)
			}
			for _, c := range checks {
				if c.status != "SUCCESS" {
					t.Errorf("check %s: %s", c.id, c.status)
				}
			}
			t.Logf("%d checks, all SUCCESS", len(checks))
			if runErr != nil || !conformancePassed.Match(out) {
				t.Errorf("the suite did not pass (%v):\n%s", runErr, out)
			}
		})
	}
}

type conformanceCheck struct{ id, status string }

var (
	ansiEscape = regexp.MustCompile(`\x1b\[[0-9;]*m`)
	// A check line: "TIMESTAMP [check-id   ] STATUS description".
	conformanceLine   = regexp.MustCompile(`(?m)^\S+ \[([^\]]+?)\s*\] (SUCCESS|FAILURE|WARNING|INFO|SKIPPED)\b`)
	conformancePassed = regexp.MustCompile(`Passed: (\d+)/(\d+), 0 failed, 0 warnings`)
)

// conformanceChecks reads the checks the suite printed (its server mode
// writes no results file).
func conformanceChecks(out []byte) []conformanceCheck {
	var checks []conformanceCheck
	for _, m := range conformanceLine.FindAllSubmatch(ansiEscape.ReplaceAll(out, nil), -1) {
		checks = append(checks, conformanceCheck{id: string(m[1]), status: string(m[2])})
	}
	return checks
}
