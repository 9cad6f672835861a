package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/sources/mcp/internal/testserver"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// The pair below measures what the source adds to a call: the same
// in-process streamable HTTP server on 127.0.0.1, called by a bare go-sdk
// client and through the source's tool (registry lookup, argument
// pass-through, result mapping). Compare ns/op and p50-ns:
//
//	go test -run '^$' -bench 'BenchmarkCall' ./pkg/sources/mcp/

func BenchmarkCallDirect(b *testing.B) {
	_, ts := httpServer(b, testserver.Options{})
	client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, &sdk.ClientOptions{Capabilities: &sdk.ClientCapabilities{}})
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	cs, err := client.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: ts.URL, HTTPClient: hc}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.Close(); hc.CloseIdleConnections() })
	args := json.RawMessage(`{"text":"ping"}`)
	ctx := context.Background()
	measure(b, func() bool {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: args})
		return err == nil && !res.IsError
	})
}

func BenchmarkCallThroughSource(b *testing.B) {
	_, ts := httpServer(b, testserver.Options{})
	reg, _ := start(b, "bench", remoteConfig(ts.URL))
	call := tool.Call{Arguments: json.RawMessage(`{"text":"ping"}`)}
	ctx := context.Background()
	measure(b, func() bool {
		return !testutil.Direct{Reg: reg}.Execute(ctx, "bench_echo", call).IsError
	})
}

// measure runs op b.N times and reports the median latency beside ns/op.
func measure(b *testing.B, op func() bool) {
	b.Helper()
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if !op() {
			b.Fatal("call failed")
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
}
