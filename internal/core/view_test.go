package core_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// TestViewFollowsTheDoorAndReloads: /mcp's calls run under
// server.mcp.tools, gRPC's do not; a named view narrows either; a reload
// changes both at once; a view name the config does not have (or no
// longer has) shows no tool.
func TestViewFollowsTheDoorAndReloads(t *testing.T) {
	t.Parallel()
	const base = `{"builtins": false, "debug": true, "server": {"mcp": {"tools": %s, "views": {"fail": {"tools": ["debug_fail"]}}}}}`
	c := newCore(t, fmt.Sprintf(base, `["debug_echo"]`), core.Options{})
	ctx := t.Context()
	outcome := func(protocol, view string) tool.Outcome {
		cl := call("debug_fail", `{"message":"x"}`)
		cl.Protocol, cl.View = protocol, view
		r, _ := c.Execute(ctx, cl)
		return r.Resolved()
	}
	for _, tc := range []struct {
		protocol, view string
		want           tool.Outcome
	}{
		{core.ProtocolGRPC, "", tool.OutcomeToolError},
		{core.ProtocolMCP, "", tool.OutcomeUnknownTool},
		{core.ProtocolGRPC, "fail", tool.OutcomeToolError},
		{core.ProtocolMCP, "fail", tool.OutcomeUnknownTool}, // the view narrows what /mcp serves
		{core.ProtocolGRPC, "nope", tool.OutcomeUnknownTool},
	} {
		if got := outcome(tc.protocol, tc.view); got != tc.want {
			t.Errorf("%s view %q: %s, want %s", tc.protocol, tc.view, got, tc.want)
		}
	}
	if _, err := c.View(nil, core.ProtocolGRPC, "nope"); !errors.Is(err, core.ErrUnknownView) || err.Error() != `no such view "nope": server.mcp.views has fail` {
		t.Errorf("an unknown view: %v", err)
	}
	next, err := config.Parse([]byte(fmt.Sprintf(`{"builtins": false, "debug": true, "server": {"mcp": {"tools": %s}}}`, `["debug_*"]`)), "", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Apply(next); err != nil {
		t.Fatal(err)
	}
	if got := outcome(core.ProtocolMCP, ""); got != tool.OutcomeToolError {
		t.Errorf("/mcp after the reload served debug_*: %s", got)
	}
	if got := outcome(core.ProtocolGRPC, "fail"); got != tool.OutcomeUnknownTool {
		t.Errorf("a view the reload removed: %s", got)
	}
}
