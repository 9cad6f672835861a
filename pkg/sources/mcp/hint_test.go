package mcp_test

import (
	"context"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/mcp"
)

// A sandboxed server that never answers initialize (npx trying to download
// with the network off) fails with its stderr tail and the hint that says
// what to do, in the status ListSources shows.
func TestSandboxedInitializeTimeoutSaysWhy(t *testing.T) {
	f := newSandboxFixture(t)
	cfg := mcp.ServerConfig{Type: mcp.TypeLocal, Timeout: 1500, Sandbox: &mcp.Sandbox{},
		Command: []string{"/bin/sh", "-c", `echo "npm error code EAI_AGAIN" >&2; echo "npm error request to https://registry.npmjs.org/x failed" >&2; exec sleep 30`}}
	src := mcp.New("npx", cfg, f.env)
	defer src.Close(context.Background())
	err := src.Start(context.Background(), registry.New())
	if err == nil {
		t.Fatal("started")
	}
	st := src.Status()
	if st.State != sources.Failed {
		t.Fatalf("status = %+v", st)
	}
	for _, want := range []string{
		"initialize: no answer within 1500ms",
		"stderr: npm error code EAI_AGAIN | npm error request to https://registry.npmjs.org/x failed",
		"the sandbox has network off for this server",
		`"sandbox": {"network": true}`,
	} {
		if !strings.Contains(st.Error, want) {
			t.Errorf("status error lacks %q:\n%s", want, st.Error)
		}
	}
	if st.Sandbox == "" || !strings.Contains(st.Sandbox, "network off") {
		t.Errorf("status sandbox = %q", st.Sandbox)
	}
}
