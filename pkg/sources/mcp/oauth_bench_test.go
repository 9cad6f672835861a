package mcp_test

import (
	"testing"

	"github.com/toolnexus/toolnexus/internal/testutil/oauthrig"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// BenchmarkOAuthCall is one call as alice to a real MCP server that
// verifies every request's JWT (internal/testutil/oauthmcp): with her own
// stored, valid OAuth token on her own session ("oauth"), and the same
// token as a static configured header on the shared session
// ("static-header"). Budget: oauth ≤ static-header + 20 µs.
func BenchmarkOAuthCall(b *testing.B) {
	r := oauthrig.Start(b, oauthrig.Options{})
	reg, w, _ := startOAuth(b, r)
	r.Connect(b, "ops", "tickets", "ops-admin")
	waitFor(b, w, "the tools", func(s *registry.Snapshot) bool { _, ok := s.Lookup("tickets_whoami"); return ok })
	res := callAs(reg, "corp:alice", "tickets_whoami", `{}`, nil)
	if res.Pending == nil {
		b.Fatalf("%+v", res)
	}
	if status, _ := r.Browser.Login(b, res.Pending.URL, "alice", nil); status != 200 {
		b.Fatal("login")
	}
	if got := callAs(reg, "corp:alice", "tickets_whoami", `{}`, &tool.Answer{ID: res.Pending.ID, OK: true}); got.Output != "you are alice" {
		b.Fatalf("%+v", got)
	}
	toks := r.MCP.Tokens()
	static := remoteConfig(r.MCP.URL)
	static.Headers = map[string]string{"Authorization": "Bearer " + toks[len(toks)-1]}
	sreg, _ := start(b, "static", static)
	for _, c := range []struct {
		name string
		reg  *registry.Registry
		tool string
	}{{"static-header", sreg, "static_whoami"}, {"oauth", reg, "tickets_whoami"}} {
		b.Run(c.name, func(b *testing.B) {
			if got := callAs(c.reg, "corp:alice", c.tool, `{}`, nil); got.Output != "you are alice" {
				b.Fatalf("%+v", got)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if got := callAs(c.reg, "corp:alice", c.tool, `{}`, nil); got.IsError {
					b.Fatal(got.Output)
				}
			}
		})
	}
}
