package mcpgateway_test

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/inproc"
	"github.com/toolnexus/toolnexus/internal/testutil/mcpclient"
)

// TestDeniedToolIsIndistinguishableFromUnknown is the probing attack: a
// token restricted to debug_echo calls a tool that exists but is outside
// its allowlist and one that does not exist. Over gRPC and over /mcp the
// two answers are the same but for the name, so the allowlist reveals
// nothing about what else the server runs.
func TestDeniedToolIsIndistinguishableFromUnknown(t *testing.T) {
	t.Setenv("TN_SEC_AGENT", agentSecret)
	g := inproc.Serve(t, `{"debug": true, "builtins": false, "skills": [], "auth": {"tokens": [
		{"name": "agent", "token": "${TN_SEC_AGENT}", "tools": ["debug_echo"]}]}}`)
	ctx := inproc.Bearer(agentSecret)
	answer := func(name string) string {
		resp, err := g.Registry.Execute(ctx, &pb.ExecuteRequest{Name: name, Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: `{}`}})
		if err != nil {
			t.Fatalf("Execute %s: %v", name, err)
		}
		r := resp.GetResult()
		return fmt.Sprintf("is_error=%v outcome=%v output=%q metadata=%v", r.GetIsError(), r.GetOutcome(), strings.ReplaceAll(r.GetOutput(), name, "NAME"), r.GetMetadata())
	}
	denied, unknown := answer("debug_fail"), answer("no_such_tool")
	if denied != unknown || !strings.Contains(denied, `outcome=OUTCOME_UNKNOWN_TOOL output="unknown tool: NAME"`) {
		t.Fatalf("Execute answers differ:\n denied:  %s\n unknown: %s", denied, unknown)
	}
	for _, name := range []string{"debug_fail", "no_such_tool"} {
		_, err := g.Registry.GetTool(ctx, &pb.GetToolRequest{Name: name})
		if status.Code(err) != codes.NotFound || status.Convert(err).Message() != fmt.Sprintf("no tool named %q (ListTools shows the available names)", name) {
			t.Fatalf("GetTool %s: %v", name, err)
		}
	}
	cs := g.MustConnect(t, agentSecret, nil)
	mcpclient.MustBeUnknown(t, cs, "debug_fail")
	mcpclient.MustBeUnknown(t, cs, "no_such_tool")
	// The operator still sees the denial, without the name reaching the
	// wire: the call counts as denied under the tool in the metrics.
	if testutil.MetricLine(g.Scrape(t), "toolnexus_tool_calls_total", `tool="debug_fail"`, `outcome="denied"`, `protocol="grpc"`) == "" {
		t.Error("the denied call is not counted as denied")
	}
}
