package mcp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/sources/mcp"
)

// A typo in a server entry must fail closed: "tool" for "tools" would
// otherwise drop the filter and expose every tool of the server.
func TestUnknownKeysThatFailOpenAreErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, raw, want string }{
		{"misspelt filter", `{"fs": {"command": "x", "tool": {"write_file": false}}}`,
			`fs.tool: unknown key; did you mean "tools"?`},
		{"misspelt sandbox", `{"fs": {"command": "x", "sandox": true}}`,
			`fs.sandox: unknown key; did you mean "sandbox"?`},
		{"another client's filter", `{"fs": {"command": "x", "excludeTools": ["write_file"]}}`,
			`fs.excludeTools: unknown key: it looks like a tool filter, and this entry spells it "tools"`},
		{"any unknown key beside a filter", `{"fs": {"command": "x", "tools": {"read_file": true}, "autoApprove": ["read_file"]}}`,
			`fs.autoApprove: unknown key in an entry that filters its tools`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := mcp.ParseConfig(json.RawMessage(c.raw))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error = %v, want %q", err, c.want)
			}
		})
	}
	// A foreign client's harmless key in an entry without a filter still
	// loads, with a warning: an mcp.json written for Cline keeps working.
	_, warns, err := mcp.ParseConfig(json.RawMessage(`{"fs": {"command": "x", "autoApprove": []}}`))
	if err != nil || len(warns) != 1 || !strings.Contains(warns[0], `unknown key "autoApprove" is ignored`) {
		t.Fatalf("foreign key: warns %q, err %v", warns, err)
	}
}
