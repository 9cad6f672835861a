package server

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// The connection bounds the docs quote are the ones the listeners apply:
// docs/deploy.md said idle gRPC connections close after 15 min while the
// server closed them after 5.
func TestDocsQuoteTheConnectionBounds(t *testing.T) {
	t.Parallel()
	minutes := func(d time.Duration) int { return int(d / time.Minute) }
	for _, q := range []struct{ file, text string }{
		{"../../README.md", fmt.Sprintf("closes a\n  connection idle for %d minutes", minutes(grpcMaxIdle))},
		{"../../README.md", fmt.Sprintf("close idle keep-alive connections after %d minutes", minutes(httpIdle))},
		{"../../README.md", fmt.Sprintf("gRPC allows %d concurrent streams per\n  connection, %d s for the handshake", grpcMaxStreams, int(handshakeTimeout/time.Second))},
		{"../../docs/deploy.md", fmt.Sprintf("the server closes only idle connections (after %d min)", minutes(grpcMaxIdle))},
	} {
		b, err := os.ReadFile(q.file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), q.text) {
			t.Errorf("%s does not say %q (the server's value)", q.file, q.text)
		}
	}
}
