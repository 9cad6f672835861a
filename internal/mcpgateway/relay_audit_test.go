package mcpgateway_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/inproc"
	"github.com/toolnexus/toolnexus/internal/testutil/mcpclient"
)

// TestRelayedRoundsAreOneCall: /mcp resumes a call whose upstream asked
// for something the client cannot answer (declined for it) within the one
// tools/call; the rounds are one call, so the audit log has one line for
// it, not one per round.
func TestRelayedRoundsAreOneCall(t *testing.T) {
	t.Parallel()
	entry := testutil.EverythingServer(t)
	auditPath := filepath.Join(t.TempDir(), "audit.log")
	g := inproc.Serve(t, fmt.Sprintf(`{"builtins": false, "skills": [], "audit": {"path": %q},
		"mcpServers": {"everything": {"command": "node", "args": [%q, "stdio"], "timeout": 60000}}}`, auditPath, entry))
	plainClient := g.MustConnect(t, "", nil)
	res := mcpclient.Call(t, plainClient, "everything_trigger-elicitation-request", map[string]any{})
	if res.IsError || !strings.Contains(mcpclient.Text(t, res), "User declined") {
		t.Fatalf("a client without elicitation: %q", mcpclient.Text(t, res))
	}
	audit, _ := os.ReadFile(auditPath)
	n := strings.Count(string(audit), `"tool":"everything_trigger-elicitation-request"`)
	if n != 1 {
		t.Fatalf("%d audit lines for one tools/call:\n%s", n, audit)
	}
}
