package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/testutil"
)

// resources, templates, read, prompts and prompt show an MCP server's
// features through FeatureService.
func TestFeatureCommands(t *testing.T) {
	up := testutil.StartFeatureUpstream(t, "docs", testutil.FeatureUpstreamOptions{})
	srv := startServer(t, fmt.Sprintf(`{"skills": [], "mcpServers": {"docs": {"url": %q}}}`, up.URL))
	deadline := time.Now().Add(20 * time.Second) // a bound for the server connecting
	for !strings.Contains(against(t, srv, "prompts").want(t, 0).stdout, "docs_greet") {
		if time.Now().After(deadline) {
			t.Fatal("the server's prompts never appeared")
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"resources"}, "file:///shared.txt  docs    shared  text/plain"},
		{[]string{"templates"}, "file:///docs/{name}"},
		{[]string{"read", "file:///docs/intro"}, "doc intro from docs\n"},
		{[]string{"read", "file:///docs.bin"}, "[4 bytes of application/octet-stream at file:///docs.bin]"},
		{[]string{"prompts"}, "docs_greet  docs    who*"},
		{[]string{"prompt", "docs_greet", "--arg", "who=ann"}, "user: docs greets ann\n"},
	} {
		if out := against(t, srv, tc.args...).want(t, 0).stdout; !strings.Contains(out, tc.want) {
			t.Errorf("toolnexus %s:\n%s\nwant it to contain %q", strings.Join(tc.args, " "), out, tc.want)
		}
	}
	if r := against(t, srv, "read", "file:///nothing").want(t, 1); !strings.Contains(r.stderr, "resource not found: file:///nothing") {
		t.Errorf("read an unknown resource: %q", r.stderr)
	}
}
