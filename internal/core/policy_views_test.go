package core_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/inproc"
	"github.com/toolnexus/toolnexus/internal/testutil/mcpclient"
)

// A hostile model hides "rm -rf" from a forbid policy in a key the policy
// does not read but bash's decoder takes for "command" (Go's encoding/json
// matches keys case-insensitively, the last one winning), with argument
// validation off so nothing else refuses the unknown key. Over gRPC and
// over /mcp each is an is_error result naming the key to fix, and the
// victim directory is intact; the plain command still runs.
func TestPolicyViewIsToolViewOverGRPCAndMCP(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pol := testutil.WriteWirePolicies(t, dir)
	g := inproc.Serve(t, fmt.Sprintf(`{"skills": [],
		"auth": {"tokens": [{"name": "agent-a", "token": %q}]},
		"policy": {"files": [%q]},
		"limits": {"validateArguments": false}}`, testutil.PolAgentA, pol))
	// The victim is made, and later looked for, by bash itself: in the
	// workspace each wire's calls run in.
	const rm = "rm -rf victim"
	attacks := []string{
		fmt.Sprintf(`{"command": "echo safe", "COMMAND": %q}`, rm),
		fmt.Sprintf(`{"Command": %q}`, rm),
		fmt.Sprintf(`{"COMMAND": %q, "command": "echo safe"}`, rm),
	}
	grpcBash := func(raw string) *pb.ToolResult {
		r, err := g.Registry.Execute(inproc.Bearer(testutil.PolAgentA), &pb.ExecuteRequest{Name: "bash", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: raw}})
		if err != nil {
			t.Fatalf("gRPC %s: %v", raw, err)
		}
		return r.GetResult()
	}
	cs := g.MustConnect(t, testutil.PolAgentA, nil)
	const mkVictim, checkVictim = `{"command": "mkdir -p victim/keep"}`, `{"command": "test -d victim/keep && echo intact"}`
	if r := grpcBash(mkVictim); r.GetIsError() {
		t.Fatal(r.GetOutput())
	}
	if res := mcpclient.Call(t, cs, "bash", json.RawMessage(mkVictim)); res.IsError {
		t.Fatal(mcpclient.Text(t, res))
	}
	for _, raw := range attacks {
		if res := grpcBash(raw); !res.GetIsError() || !mentionsKeyCase(res.GetOutput()) {
			t.Errorf("gRPC %s: %v %q, want an is_error result naming the key", raw, res.GetOutcome(), res.GetOutput())
		}
		if r := grpcBash(checkVictim); !strings.Contains(r.GetOutput(), "intact") {
			t.Fatalf("gRPC: after %s the victim is gone: %q", raw, r.GetOutput())
		}
		res := mcpclient.Call(t, cs, "bash", json.RawMessage(raw))
		if !res.IsError || !mentionsKeyCase(mcpclient.Text(t, res)) {
			t.Errorf("/mcp %s: %v %q, want an isError result naming the key", raw, res.IsError, mcpclient.Text(t, res))
		}
		if res := mcpclient.Call(t, cs, "bash", json.RawMessage(checkVictim)); !strings.Contains(mcpclient.Text(t, res), "intact") {
			t.Fatalf("/mcp: after %s the victim is gone: %q", raw, mcpclient.Text(t, res))
		}
	}
}

// mentionsKeyCase reports whether a refusal names the letter-case problem
// (the policy's words, or the tool's unknown field).
func mentionsKeyCase(out string) bool {
	return strings.Contains(out, "differ only in letter case") || strings.Contains(out, "unknown field")
}
