package core_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/core"
	"github.com/toolnexus/toolnexus/internal/policy"
	"github.com/toolnexus/toolnexus/internal/telemetry/otlp"
	"github.com/toolnexus/toolnexus/internal/testutil"
)

// BenchmarkCoreExecute is one call of debug_echo through core.Execute, no
// wire: what the core's own call path costs (tracing and audit off).
func BenchmarkCoreExecute(b *testing.B) {
	cfg, err := config.Parse([]byte(`{"debug": true, "builtins": false}`), "", b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	c, err := core.New(cfg, core.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(context.Background())
	benchEcho(b, c)
}

// BenchmarkCoreExecuteTraced is BenchmarkCoreExecute with tracing on,
// every call sampled and exported over OTLP/gRPC to a receiver in this
// process.
func BenchmarkCoreExecuteTraced(b *testing.B) {
	recv := testutil.StartOTLPReceiver(b)
	recv.Discard()
	cfg, err := config.Parse([]byte(`{"debug": true, "builtins": false}`), "", b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	tp, err := otlp.Setup(context.Background(), config.Telemetry{Endpoint: recv.Endpoint, Protocol: "grpc"}, func(string) (string, bool) { return "", false }, log)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = tp.Shutdown(context.Background()) }()
	c, err := core.New(cfg, core.Options{Logger: log, Tracing: tp.TracerProvider()})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(context.Background())
	benchEcho(b, c)
}

// benchEcho measures debug_echo calls through c.Execute.
func benchEcho(b *testing.B, c *core.Core) {
	benchEchoWith(b, c, `{"message":"hello"}`)
}

// benchEchoWith measures debug_echo calls with these arguments.
func benchEchoWith(b *testing.B, c *core.Core, args string) {
	call := core.Call{Name: "debug_echo", Arguments: json.RawMessage(args), Protocol: core.ProtocolGRPC}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if res, _ := c.Execute(ctx, call); res.IsError {
			b.Fatal(res.Output)
		}
	}
}

// BenchmarkCoreExecutePolicies is BenchmarkCoreExecute with 100 Cedar
// policies loaded: "scoped" has 99 forbids on other tools (the index skips
// them), "all" has every policy apply to the tool called, and
// "all-read" is "all" with a call whose arguments hold the member every
// forbid reads, so each one's pattern is matched.
func BenchmarkCoreExecutePolicies(b *testing.B) {
	for _, bc := range []struct {
		name   string
		scoped bool
		args   string
	}{
		{"scoped", true, `{"message":"hello"}`},
		{"all", false, `{"message":"hello"}`},
		{"all-read", false, `{"message":"hello","command":"echo hello"}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			dir := b.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "bench.cedar"), []byte(policy.BenchPolicies(100, bc.scoped)), 0o600); err != nil {
				b.Fatal(err)
			}
			cfg, err := config.Parse([]byte(`{"debug": true, "builtins": false, "policy": {"files": ["bench.cedar"]}}`), "", dir)
			if err != nil {
				b.Fatal(err)
			}
			c, err := core.New(cfg, core.Options{Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close(context.Background())
			benchEchoWith(b, c, bc.args)
		})
	}
}
