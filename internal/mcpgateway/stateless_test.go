package mcpgateway_test

import (
	"fmt"
	"testing"

	"github.com/toolnexus/toolnexus/internal/testutil/inproc"
)

// /mcp advertises tools.listChanged only where it sends list changes: a
// stateful gateway does, the stateless one (sessions.shared) keeps no
// session to notify and must not claim it.
func TestMCPListChangedAdvertisedOnlyWhenSent(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		sessions string
		want     bool
	}{
		{"stateful", `{}`, true},
		{"stateless (sessions.shared)", fmt.Sprintf(`{"shared": true, "root": %q}`, t.TempDir()), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := inproc.Serve(t, `{"debug": true, "builtins": false, "skills": [], "sessions": `+c.sessions+`}`)
			cs := g.MustConnect(t, "", nil)
			defer cs.Close()
			caps := cs.InitializeResult().Capabilities
			if caps == nil || caps.Tools == nil {
				t.Fatalf("capabilities %+v: want tools", caps)
			}
			if caps.Tools.ListChanged != c.want {
				t.Errorf("tools.listChanged = %v, want %v", caps.Tools.ListChanged, c.want)
			}
		})
	}
}
