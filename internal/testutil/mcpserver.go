package testutil

import (
	"net"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeMCP serves s over streamable HTTP on a free loopback port until the
// test ends, and returns its base URL ("http://127.0.0.1:PORT"; the SDK's
// handler answers on any path, conventionally /mcp). Tools added to s
// later send tools/list_changed to connected clients.
func ServeMCP(t testing.TB, s *mcp.Server) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)}
	go func() { _ = hs.Serve(lis) }()
	t.Cleanup(func() { _ = hs.Close() })
	return "http://" + lis.Addr().String()
}
