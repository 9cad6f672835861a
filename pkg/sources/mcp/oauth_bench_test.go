package mcp_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/callerctx"

	"github.com/toolnexus/toolnexus/internal/testutil/oauthrig"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources/mcp"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// BenchmarkOAuthCall is one call as alice to a real MCP server that
// verifies every request's JWT (internal/testutil/oauthmcp): with her own
// stored, valid OAuth token on her own session ("oauth"), and the same
// token as a static configured header on the shared session
// ("static"), the two alternating. Budget: oauth-extra-µs/call ≤ 20.
func BenchmarkOAuthCall(b *testing.B) {
	r := oauthrig.Start(b, oauthrig.Options{})
	reg, _ := connectedOAuth(b, r)
	loginAs(b, r, reg, "corp:alice", "alice")
	toks := r.MCP.Tokens()
	staticCfg := remoteConfig(r.MCP.URL)
	staticCfg.Headers = map[string]string{"Authorization": "Bearer " + toks[len(toks)-1]}
	sreg, _ := start(b, "static", staticCfg)
	for _, c := range []struct {
		reg  *registry.Registry
		tool string
	}{{sreg, "static_whoami"}, {reg, "tickets_whoami"}} {
		if got := callAs(c.reg, "corp:alice", c.tool, `{}`, nil); got.Output != "you are alice" {
			b.Fatalf("%+v", got)
		}
	}
	// The two calls alternate, and which goes first alternates too, so
	// drift in the machine's load (and the garbage one leaves for the
	// other) falls on both alike.
	one := func(reg *registry.Registry, name string) time.Duration {
		t0 := time.Now()
		if got := callAs(reg, "corp:alice", name, `{}`, nil); got.IsError {
			b.Fatal(got.Output)
		}
		return time.Since(t0)
	}
	var static, oauth time.Duration
	b.ResetTimer()
	for i := range b.N {
		if i%2 == 0 {
			static += one(sreg, "static_whoami")
			oauth += one(reg, "tickets_whoami")
		} else {
			oauth += one(reg, "tickets_whoami")
			static += one(sreg, "static_whoami")
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(static.Nanoseconds())/n, "static-ns/call")
	b.ReportMetric(float64(oauth.Nanoseconds())/n, "oauth-ns/call")
	b.ReportMetric(float64((oauth-static).Nanoseconds())/n/1000, "oauth-extra-µs/call")
}

// BenchmarkOAuthCallerPath is only what a call to an "oauth" server does
// that the same call with a static header does not (CallerPath): the
// caller's token from memory, its session from the pool, the release. It
// isolates the part of BenchmarkOAuthCall's difference that is toolnexus's
// own from the noise of two HTTP round trips.
func BenchmarkOAuthCallerPath(b *testing.B) {
	r := oauthrig.Start(b, oauthrig.Options{})
	reg, w, src := startOAuth(b, r)
	r.Connect(b, "corp:alice", "tickets", "alice") // hers lists the tools too
	waitFor(b, w, "the tools", func(s *registry.Snapshot) bool { _, ok := s.Lookup("tickets_whoami"); return ok })
	if got := callAs(reg, "corp:alice", "tickets_whoami", `{}`, nil); got.Output != "you are alice" {
		b.Fatalf("%+v", got)
	}
	ctx := callerctx.With(context.Background(), principal("corp:alice"))
	call := tool.Call{Name: "tickets_whoami", Arguments: json.RawMessage(`{}`), Owner: tool.Owner{Principal: "corp:alice", Session: "s"}}
	b.ReportAllocs()
	for b.Loop() {
		if !mcp.CallerPath(src, ctx, call) {
			b.Fatal("no session")
		}
	}
}
