package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/internal/session"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// The console's budget: a page renders in at most 50 ms of server time
// with 10,000 tools and 1,000 held calls (lists are paged). Each
// benchmark is one page, served to an admin by the console's handler
// with no network in between; BenchmarkPageLogin, a page that reads
// nothing, is the baseline of the same run (BENCHMARKS.md).

const (
	benchTools = 10000
	benchHeld  = 1000
)

// manyTools are n tools with a description and a schema each, as an
// OpenAPI source of a large API gives.
func manyTools(n int) []tool.Tool {
	out := make([]tool.Tool, n)
	for i := range out {
		schema := fmt.Sprintf(`{"type":"object","properties":{"id":{"type":"string","description":"The record %d to read"},"limit":{"type":"integer"}},"required":["id"]}`, i)
		out[i] = tool.Must(tool.New(fmt.Sprintf("api_op_%05d", i), func(context.Context, tool.Call) tool.Result { return tool.Result{} },
			tool.WithDescription(fmt.Sprintf("Reads the records of collection %d, page by page", i)), tool.WithInputSchema(json.RawMessage(schema))))
	}
	return out
}

// benchRig is a rig with the budget's tools and held calls, and an
// admin's session cookie.
func benchRig(b *testing.B) (*rig, *http.Cookie) {
	b.Helper()
	r := startRig(b, rigOptions{extraTools: manyTools(benchTools),
		configPatch: map[string]any{"policy": map[string]any{"files": []string{"policy.cedar"}, "approvers": []string{"lead"},
			"maxPending": benchHeld, "maxPendingTotal": benchHeld}}})
	alice := r.core.Authenticator().StaticPrincipal("alice")
	for i := range benchHeld {
		res, _ := r.core.Execute(context.Background(), core.Call{Name: "deploy", Protocol: core.ProtocolGRPC, Caller: alice,
			Arguments: json.RawMessage(fmt.Sprintf(`{"service":"svc-%d","note":"release %d"}`, i, i))})
		if res.Pending == nil {
			b.Fatalf("call %d was not held: %s", i, res.Output)
		}
	}
	for i := range 50 {
		if res, _ := r.core.Execute(context.Background(), core.Call{Name: "echo", Protocol: core.ProtocolGRPC, Caller: alice,
			Session: fmt.Sprintf("work-%d", i)}); res.IsError {
			b.Fatal(res.Output)
		}
	}
	if len(r.core.Sessions("", true)) < 50 || r.core.Sessions("alice", false)[0].Principal == session.Anonymous {
		b.Fatal("the sessions were not made")
	}
	p := loggedIn(b, r, opsToken)
	ck := &http.Cookie{Name: "toolnexus-session", Value: p.cookie("toolnexus-session")}
	return r, ck
}

func BenchmarkPages(b *testing.B) {
	r, ck := benchRig(b)
	h := r.web.Handler()
	for _, path := range []string{"/login", "/approvals", "/approvals?page=20", "/tools", "/tools?page=100", "/tools?q=read+records+of+collection+42",
		"/sources", "/sessions", "/audit", "/audit?principal=alice&tool=deploy", "/connections"} {
		b.Run(strings.TrimPrefix(path, "/"), func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, r.URL+path, nil)
			if path != "/login" {
				req.AddCookie(ck)
			}
			serve := func() *httptest.ResponseRecorder {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				return rec
			}
			if rec := serve(); rec.Code != http.StatusOK { // also builds the search index
				b.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				serve()
			}
		})
	}
}
