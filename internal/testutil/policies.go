package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

// WirePolicies are the Cedar policies of the tests over the wire: agents may run tools; never rm -rf or
// curl | sh in bash; a write outside docs/ waits for a human.
const WirePolicies = `@id("agents-may-run-tools")
permit(principal, action == Action::"execute", resource);

@id("no-rm-rf")
@reason("rm -rf is never allowed")
forbid(principal, action, resource == Tool::"bash")
when { context.arguments has command && context.arguments.command like "*rm -rf*" };

@id("no-curl-pipe-sh")
@reason("piping a download into a shell is never allowed")
forbid(principal, action, resource == Tool::"bash")
when { context.arguments has command && context.arguments.command like "*curl*|*sh*" };

@id("writes-outside-docs")
@approval("required")
@reason("writes outside docs/ need a human's approval")
permit(principal, action, resource == Tool::"write")
when { context.arguments has path && !(context.arguments.path like "docs/*") };
`

// The tokens of the wire policies' principals: agent-a, agent-b, the
// admin ops and the approver reviewer.
const (
	PolAgentA   = "pol-agent-a-7f3e1b"
	PolAgentB   = "pol-agent-b-2c9d44"
	PolOps      = "pol-ops-admin-91ab0c"
	PolReviewer = "pol-reviewer-5e6f70"
)

// WriteWirePolicies writes WirePolicies to dir/tools.cedar and returns
// its path.
func WriteWirePolicies(t testing.TB, dir string) string {
	t.Helper()
	pol := filepath.Join(dir, "tools.cedar")
	if err := os.WriteFile(pol, []byte(WirePolicies), 0o600); err != nil {
		t.Fatal(err)
	}
	return pol
}
