package mcpgateway_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/internal/testutil/inproc"
	"github.com/toolnexus/toolnexus/internal/testutil/mcpclient"
)

// TestSessionsOverMCP: each MCP session has its own workspace; with the
// Toolnexus-Session header an MCP client shares a gRPC session's, and a
// bad header is refused before MCP sees it.
func TestSessionsOverMCP(t *testing.T) {
	t.Parallel()
	g := inproc.Serve(t, `{"skills": []}`)
	one, two := g.MustConnect(t, "", nil), g.MustConnect(t, "", nil)
	if res := mcpclient.Call(t, one, "write", map[string]any{"path": "n.txt", "content": "one's"}); res.IsError {
		t.Fatal(mcpclient.Text(t, res))
	}
	if res := mcpclient.Call(t, two, "read", map[string]any{"path": "n.txt"}); !res.IsError {
		t.Fatalf("a second MCP session reads the first's file: %q", mcpclient.Text(t, res))
	}
	if res := mcpclient.Call(t, one, "read", map[string]any{"path": "n.txt"}); mcpclient.Text(t, res) != "one's" {
		t.Fatalf("the MCP session reads %q", mcpclient.Text(t, res))
	}
	// With the header, an MCP client shares the workspace of a gRPC
	// session of the same id.
	if r := inproc.ExecIn(t, inproc.InSession("", "shared"), g.Registry, "write", map[string]any{"path": "g.txt", "content": "from grpc"}); r.GetIsError() {
		t.Fatal(r.GetOutput())
	}
	cs := mcpclient.MustConnect(t, g.MCPURL, mcpclient.Dial{Header: []string{"Toolnexus-Session", "shared"}})
	if res := mcpclient.Call(t, cs, "read", map[string]any{"path": "g.txt"}); mcpclient.Text(t, res) != "from grpc" {
		t.Fatalf("MCP with the session header reads %q", mcpclient.Text(t, res))
	}
	// A bad header is refused before MCP sees it.
	req, _ := http.NewRequest(http.MethodPost, g.MCPURL, strings.NewReader(`{}`))
	req.Header.Set("Toolnexus-Session", "../x")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("a bad Toolnexus-Session header: HTTP %d", resp.StatusCode)
	}
}
