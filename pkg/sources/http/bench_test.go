package http_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// BenchmarkExecute measures one call of a declared POST tool end to end
// against a local server: argument routing, the request, the response.
func BenchmarkExecute(b *testing.B) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, `{"ok":true}`)
	}))
	defer api.Close()
	cfg := parse(b, `[{"name":"create","method":"POST","url":`+q(api.URL+"/posts/{id}")+`,"query":["dry"],"resultMode":"json",
		"headers":{"Authorization":"Bearer x"}}]`, "")
	reg, _, err := start(b, cfg, envWithCap(0))
	if err != nil {
		b.Fatal(err)
	}
	c := tool.Call{Arguments: json.RawMessage(`{"id":7,"dry":true,"title":"Hello","tags":["a","b"],"n":1.5}`)}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if res := (testutil.Direct{Reg: reg}).Execute(ctx, "create", c); res.IsError {
			b.Fatal(res.Output)
		}
	}
}
