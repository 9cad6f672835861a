package mcpgateway_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/internal/mcpgateway"
	"github.com/toolnexus/toolnexus/internal/testutil"
)

// BenchmarkReadResource1MiB reads a 1 MiB resource (a blob, 1.33 MiB of
// base64 on the wire) from a go-sdk MCP server over streamable HTTP on
// loopback, with the same go-sdk client: directly, and through toolnexus's
// /mcp (core, MCP source, second HTTP hop). The budget is
// toolnexus/direct <= 1.2, both measured in the same run:
//
//	go test -run '^$' -bench ReadResource1MiB -count 6 ./internal/mcpgateway/
func BenchmarkReadResource1MiB(b *testing.B) {
	const size = 1 << 20
	up := testutil.StartFeatureUpstream(b, "big", testutil.FeatureUpstreamOptions{Big: size})
	dir := b.TempDir()
	cfgJSON := fmt.Sprintf(`{"builtins": false, "mcpServers": {"big": {"url": %q}}}`, up.URL)
	cfg, err := config.Parse([]byte(cfgJSON), filepath.Join(dir, "config.json"), dir)
	if err != nil {
		b.Fatal(err)
	}
	c, err := core.New(cfg, core.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	g := mcpgateway.New(c, mcpgateway.Options{Version: "bench", Logger: slog.New(slog.DiscardHandler)})
	hs := httptest.NewServer(g)
	b.Cleanup(func() {
		hs.Close()
		g.Close()
		_ = c.Close(context.Background())
	})
	for _, target := range []struct{ name, url string }{{"direct", up.URL}, {"toolnexus", hs.URL + mcpgateway.Path}} {
		b.Run(target.name, func(b *testing.B) { testutil.BenchReadResource(b, target.url, "file:///big.bin", size) })
	}
}
