package mcp_test

import (
	"context"
	"encoding/json"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/internal/testutil"

	"github.com/toolnexus/toolnexus/internal/suspend/pending"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/mcp"
	"github.com/toolnexus/toolnexus/pkg/sources/mcp/internal/testserver"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// BenchmarkCallAnswering is what offering elicitation and sampling costs a
// call that never suspends (the call runs as a flight: a goroutine for the
// SDK's synchronous CallTool, a map entry for request attribution), against
// the same server with both opted out. Run the two alternately:
//
//	go test -run '^$' -bench 'BenchmarkCallAnswering' -count 6 ./pkg/sources/mcp/
func BenchmarkCallAnswering(b *testing.B) {
	for _, c := range []struct {
		name string
		on   bool
	}{{"optedOut", false}, {"offered", true}} {
		b.Run(c.name, func(b *testing.B) {
			_, ts := httpServer(b, testserver.Options{})
			cfg := remoteConfig(ts.URL)
			if !c.on {
				off := false
				cfg.Elicitation, cfg.Sampling = &off, &off
			}
			reg, _ := start(b, "bench", cfg)
			call := tool.Call{Arguments: json.RawMessage(`{"text":"ping"}`)}
			ctx := context.Background()
			measure(b, func() bool { return !(testutil.Direct{Reg: reg}).Execute(ctx, "bench_echo", call).IsError })
		})
	}
}

// BenchmarkPendingThousand holds 1,000 calls suspended on server-everything's
// elicitation request at once and reports what each costs this process:
// goroutines, Go heap and stacks in use (after a GC), and resident memory
// per pending call. The goroutines are the SDK's own (its handler for the
// server's request, and its synchronous CallTool, which the flight runs);
// the pending store adds a timer, no goroutine. RSS only counts in a fresh
// process (the first iteration): later ones reuse what the first freed.
//
//	go test -run '^$' -bench 'BenchmarkPendingThousand' -benchtime 1x ./pkg/sources/mcp/
func BenchmarkPendingThousand(b *testing.B) {
	const n = 1000
	bin := everythingPath(b)
	raw, _ := json.Marshal(map[string]any{"everything": map[string]any{"command": bin, "args": []string{"stdio"}}})
	servers, _, err := mcp.ParseConfig(raw)
	if err != nil {
		b.Fatal(err)
	}
	store := pending.NewLocal(pending.Limits{MaxPerPrincipal: 2 * n})
	reg, _ := startEnv(b, "everything", servers["everything"], sources.Env{Pending: store})
	measurePending(b, reg, "everything_trigger-elicitation-request", n)
}

// measurePending suspends n calls of the tool name at once, reports what
// each pending call costs (goroutines, Go heap and stacks, RSS), then
// declines them all. BenchmarkPendingThousand and its Modern twin differ
// only in the upstream behind name, so they share this loop and their
// numbers stay comparable.
func measurePending(b *testing.B, reg *registry.Registry, name string, n int) {
	ctx := context.Background()
	for range b.N {
		runtime.GC()
		g0, rss0, mem0 := runtime.NumGoroutine(), rssKiB(b), inUseKiB()
		ids := make([]string, n)
		for i := range n {
			args := json.RawMessage(`{"i":` + strconv.Itoa(i) + `}`)
			r := (testutil.Direct{Reg: reg}).Execute(ctx, name, tool.Call{Arguments: args, Owner: tool.Owner{Principal: "bench"}})
			if r.Pending == nil {
				b.Fatalf("call %d did not suspend: %+v", i, r)
			}
			ids[i] = r.Pending.ID
		}
		runtime.GC()
		g1, rss1, mem1 := runtime.NumGoroutine(), rssKiB(b), inUseKiB()
		b.ReportMetric(float64(g1-g0)/float64(n), "goroutines/pending")
		b.ReportMetric(float64(mem1-mem0)/float64(n), "heap+stack-KiB/pending")
		b.ReportMetric(float64(rss1-rss0)/float64(n), "KiB/pending")
		for i, id := range ids {
			args := json.RawMessage(`{"i":` + strconv.Itoa(i) + `}`)
			if r := (testutil.Direct{Reg: reg}).Execute(ctx, name, tool.Call{Arguments: args, Owner: tool.Owner{Principal: "bench"}, Answer: &tool.Answer{ID: id}}); r.IsError {
				b.Fatalf("decline %d: %+v", i, r)
			}
		}
	}
}

func everythingPath(b *testing.B) string {
	bin := everythingBin
	if _, err := os.Stat(bin); err != nil {
		b.Skipf("@modelcontextprotocol/server-everything not installed (npm ci --prefix e2e/node): %v", err)
	}
	return bin
}

// inUseKiB is the Go heap and goroutine stacks in use, which (unlike RSS)
// shrink back when what a previous iteration held is freed.
func inUseKiB() int {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int((m.HeapInuse + m.StackInuse) / 1024)
}

// rssKiB is this process's resident set size.
func rssKiB(b *testing.B) int {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skip("no /proc/self/status")
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return kb
		}
	}
	return 0
}
