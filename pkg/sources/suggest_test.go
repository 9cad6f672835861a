package sources_test

import (
	"testing"

	"github.com/toolnexus/toolnexus/pkg/sources"
)

func TestSuggest(t *testing.T) {
	t.Parallel()
	known := []string{"mcpServers", "servers", "mcp", "builtins", "skills"}
	for in, want := range map[string]string{
		"mcpServer":  "mcpServers", // one letter off
		"MCPSERVERS": "mcpServers", // case is ignored
		"skils":      "skills",
		"fs":         "", // too short to guess
		"workspace":  "",
	} {
		if got := sources.Suggest(in, known); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", in, got, want)
		}
	}
}
