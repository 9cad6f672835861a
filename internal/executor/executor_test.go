package executor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/goleak"

	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/executor"
	"github.com/toolnexus/toolnexus/internal/metrics"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/debug"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// rig is a real registry with the debug tools and an executor hooked to it,
// configured from a real config text.
type rig struct {
	reg *registry.Registry
	x   *executor.Executor
	m   *metrics.Metrics
}

func limits(t testing.TB, limitsJSON string) config.Limits {
	t.Helper()
	text := `{}`
	if limitsJSON != "" {
		text = `{"limits": ` + limitsJSON + `}`
	}
	cfg, err := config.Parse([]byte(text), "", t.TempDir())
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return cfg.Limits
}

func newRig(t testing.TB, limitsJSON string, native ...tool.Tool) *rig {
	t.Helper()
	reg := registry.New()
	m := metrics.New(prometheus.NewRegistry())
	x := executor.New(reg, m.ForExecutor(), limits(t, limitsJSON), nil)
	if err := reg.Replace(registry.Layer(sources.KindDebug), debug.Tools()); err != nil {
		t.Fatal(err)
	}
	if len(native) > 0 {
		if err := reg.Replace(registry.Layer(sources.KindNative), native); err != nil {
			t.Fatal(err)
		}
	}
	return &rig{reg: reg, x: x, m: m}
}

func (r *rig) call(name, args string) tool.Result {
	res, _ := run(context.Background(), r.x, name, json.RawMessage(args), "")
	return res
}

// run takes one call through the executor's parts in the order the core's
// pipeline uses them (internal/core/pipeline.go): resolve, record,
// arguments, slots and timeout, run. It returns the source label the call
// was counted under.
func run(ctx context.Context, x *executor.Executor, name string, args json.RawMessage, principal string) (tool.Result, string) {
	p := x.Prepared(name)
	rec := x.Start(p, executor.ProtocolGRPC)
	if p == nil {
		res := registry.UnknownTool(name)
		rec.End(ctx, res.Resolved(), res.Refusal)
		return res, executor.UnknownLabel
	}
	res := runPrepared(ctx, p, args, principal)
	rec.End(ctx, res.Resolved(), res.Refusal)
	return res, p.Source()
}

func runPrepared(ctx context.Context, p *executor.Prepared, args json.RawMessage, principal string) tool.Result {
	args, refused, ok := p.Arguments(args)
	if !ok {
		return refused
	}
	slot, refused, ok := p.Acquire(ctx, principal)
	if !ok {
		return refused
	}
	defer slot.Release()
	return slot.Settle(ctx, p.Run(slot.Context(), tool.Call{Name: p.Entry().Tool.Name, Arguments: args, Owner: tool.Owner{Principal: principal}}))
}

// counted is a tool that records whether it ran.
func counted(name, schema string, runs *atomic.Int64) tool.Tool {
	return tool.Must(tool.New(name, func(context.Context, tool.Call) tool.Result {
		runs.Add(1)
		return tool.Success("ran", nil)
	}, tool.WithInputSchema(json.RawMessage(schema))))
}

const profileSchema = `{"type":"object","properties":{
	"user":{"type":"object","properties":{"age":{"type":"integer","minimum":0},"name":{"type":"string","minLength":1}},"required":["name"]},
	"mode":{"enum":["fast","slow"]},
	"tags":{"type":"array","items":{"type":"string"},"maxItems":3},
	"ratio":{"type":"number","exclusiveMaximum":1}},
	"required":["user"],"additionalProperties":false}`

func TestSchemaMismatchNamesEachFieldAndWhatWasExpected(t *testing.T) {
	var runs atomic.Int64
	r := newRig(t, "", counted("profile", profileSchema, &runs))
	cases := []struct{ name, args, want string }{
		{"debug_sleep", `{"ms":"x"}`, "invalid arguments for debug_sleep (fix these and call again):\n" +
			"- ms: expected integer, got string"},
		{"debug_sleep", `{}`, "invalid arguments for debug_sleep (fix these and call again):\n" +
			"- ms: missing; this field is required"},
		{"debug_sleep", `{"ms":1.5}`, "invalid arguments for debug_sleep (fix these and call again):\n" +
			"- ms: expected integer, got number"},
		{"debug_sleep", `{"ms":-1,"extra":true}`, "invalid arguments for debug_sleep (fix these and call again):\n" +
			"- extra: unknown property; remove it (this tool takes: ms)\n" +
			"- ms: must be >= 0, got -1"},
		{"profile", `{"user":{"age":"old"},"mode":"turbo","tags":[1,"x",2,"y"],"ratio":1.5,"zz":1}`,
			"invalid arguments for profile (fix these and call again):\n" +
				"- mode: expected one of \"fast\", \"slow\", got \"turbo\"\n" +
				"- ratio: must be < 1, got 1.5\n" +
				"- tags: must have at most 3 items, got 4\n" +
				"- tags[0]: expected string, got number\n" +
				"- tags[2]: expected string, got number\n" +
				"- user.age: expected integer, got string\n" +
				"- user.name: missing; this field is required\n" +
				"- zz: unknown property; remove it (this tool takes: mode, ratio, tags, user)"},
		{"profile", `{"user":{"name":""}}`, "invalid arguments for profile (fix these and call again):\n" +
			"- user.name: must be at least 1 characters long, got 0"},
	}
	for _, c := range cases {
		res := r.call(c.name, c.args)
		if !res.IsError || res.Outcome != tool.OutcomeInvalidArguments || res.Output != c.want {
			t.Errorf("%s %s:\n got {is_error=%v %v}\n%s\nwant {true invalid_arguments}\n%s", c.name, c.args, res.IsError, res.Outcome, res.Output, c.want)
		}
	}
	if runs.Load() != 0 {
		t.Fatalf("the tool ran %d times on invalid arguments", runs.Load())
	}
	if res := r.call("profile", `{"user":{"name":"ada","age":36},"mode":"fast","tags":["a"],"ratio":0.5}`); res.IsError || runs.Load() != 1 {
		t.Fatalf("valid arguments: %+v (runs %d)", res, runs.Load())
	}
	got := value(r.m.Calls.WithLabelValues("debug", "debug_sleep", "invalid_arguments", "grpc"))
	if got != 4 {
		t.Fatalf("calls_total{debug_sleep, invalid_arguments} = %v, want 4", got)
	}
}

func TestAlternativesReadAsAlternatives(t *testing.T) {
	var runs atomic.Int64
	r := newRig(t, "", counted("u", `{"type":"object","properties":{
		"x":{"anyOf":[{"type":"string"},{"type":"integer"}]},
		"y":{"oneOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"type":"array"}]},
		"o":{"oneOf":[{"type":"integer"},{"type":"number"}]},
		"n":{"not":{"type":"null"}},
		"c":{"const":"k"},
		"p":{"type":"string","pattern":"^[a-z]+$"}}}`, &runs))
	const head = "invalid arguments for u (fix these and call again):\n"
	for _, c := range []struct{ args, want string }{
		{`{"x":true}`, "- x: expected string or integer, got boolean"},
		{`{"y":5}`, "- y: expected object or array, got number"},
		{`{"y":{"b":1}}`, "- y: matches none of the allowed forms: (1) y.a: missing; this field is required (2) expected array, got object"},
		{`{"o":3}`, "- o: matches more than one of the allowed forms; change it to match exactly one"},
		{`{"n":null,"c":"q","p":"ABC"}`, "- c: expected \"k\", got \"q\"\n" +
			"- n: this value is not allowed here (the schema's \"not\" rule excludes it)\n" +
			"- p: must match the regular expression \"^[a-z]+$\""},
	} {
		if res := r.call("u", c.args); res.Outcome != tool.OutcomeInvalidArguments || res.Output != head+c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.args, res.Output, head+c.want)
		}
	}
	if runs.Load() != 0 {
		t.Fatal("the tool ran on invalid arguments")
	}
}

func TestArgumentsMustBeAJSONObject(t *testing.T) {
	r := newRig(t, "")
	for _, args := range []string{`[1]`, `"x"`, `{"a":`, `null`, ` 7`} {
		res := r.call("debug_echo", args)
		if res.Outcome != tool.OutcomeInvalidArguments || res.Output != "invalid arguments for debug_echo: the arguments must be a JSON object, e.g. {}" {
			t.Errorf("%s: %+v", args, res)
		}
	}
	// Absent arguments mean {}.
	if res := r.call("debug_echo", ""); res.IsError || res.Output != "{}" {
		t.Fatalf("empty arguments: %+v", res)
	}
}

func TestValidationCanBeTurnedOff(t *testing.T) {
	// The tool's own check answers when the server's is off.
	const own = `debug_sleep: "ms" must be an integer >= 0`
	t.Run("globally", func(t *testing.T) {
		r := newRig(t, `{"validateArguments": false}`)
		if res := r.call("debug_sleep", `{"ms":"x"}`); res.Output != own {
			t.Fatalf("got %q, want the tool's own message", res.Output)
		}
		if res := r.call("debug_fail", `{"message": 5}`); strings.HasPrefix(res.Output, "invalid arguments") {
			t.Fatalf("debug_fail validated although validation is off: %q", res.Output)
		}
	})
	t.Run("per tool", func(t *testing.T) {
		r := newRig(t, `{"tools": {"debug_sleep": {"validateArguments": false}}}`)
		if res := r.call("debug_sleep", `{"ms":"x"}`); res.Output != own {
			t.Fatalf("got %q, want the tool's own message", res.Output)
		}
		if res := r.call("debug_fail", `{"message": 5}`); res.Output != "invalid arguments for debug_fail (fix these and call again):\n- message: expected string, got number" {
			t.Fatalf("other tools must stay validated: %q", res.Output)
		}
	})
	t.Run("per tool on while global off", func(t *testing.T) {
		r := newRig(t, `{"validateArguments": false, "tools": {"debug_sleep": {"validateArguments": true}}}`)
		if res := r.call("debug_sleep", `{}`); res.Outcome != tool.OutcomeInvalidArguments {
			t.Fatalf("got %+v", res)
		}
	})
}

func TestToolWithUncompilableSchemaStillRuns(t *testing.T) {
	var runs atomic.Int64
	var logs bytes.Buffer
	reg := registry.New()
	x := executor.New(reg, metrics.New(prometheus.NewRegistry()).ForExecutor(), limits(t, ""), slog.New(slog.NewTextHandler(&logs, nil)))
	if err := reg.Replace(registry.Layer(sources.KindNative), []tool.Tool{counted("odd", `{"type": 12}`, &runs)}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if res, _ := run(context.Background(), x, "odd", json.RawMessage(`{"a":1}`), ""); res.IsError {
			t.Fatalf("got %+v; a tool whose own schema is broken must stay usable", res)
		}
	}
	if runs.Load() != 3 {
		t.Fatalf("runs %d", runs.Load())
	}
	// The operator is told once, not on every call.
	if n := strings.Count(logs.String(), "input schema does not compile"); n != 1 || !strings.Contains(logs.String(), "tool=odd") {
		t.Fatalf("%d warnings in:\n%s", n, logs.String())
	}
}

// gate is a native tool that counts how many of its calls run at once and
// holds each call until released.
type gate struct {
	running, max atomic.Int64
	entered      chan struct{}
	release      chan struct{}
	// stubborn calls ignore their context and hold their slot until released.
	stubborn bool
}

func newGate() *gate {
	return &gate{entered: make(chan struct{}, 1024), release: make(chan struct{})}
}

func (g *gate) tool(name string) tool.Tool {
	return tool.Must(tool.New(name, func(ctx context.Context, _ tool.Call) tool.Result {
		n := g.running.Add(1)
		for {
			m := g.max.Load()
			if n <= m || g.max.CompareAndSwap(m, n) {
				break
			}
		}
		g.entered <- struct{}{}
		done := ctx.Done()
		if g.stubborn {
			done = nil
		}
		select {
		case <-g.release:
		case <-done:
		}
		runtime.Gosched()
		g.running.Add(-1)
		return tool.Success("done", nil)
	}))
}

func TestPerToolConcurrencyLimitHolds(t *testing.T) {
	const limit, calls = 3, 40
	g := newGate()
	other := newGate()
	close(other.release)
	r := newRig(t, fmt.Sprintf(`{"tools": {"held": {"maxConcurrency": %d}}}`, limit), g.tool("held"), other.tool("free"))
	done := make(chan []tool.Result)
	go func() {
		var wg sync.WaitGroup
		res := make([]tool.Result, calls)
		for i := range calls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res[i], _ = run(context.Background(), r.x, "held", nil, "")
			}()
		}
		wg.Wait()
		done <- res
	}()
	// Exactly limit calls get in; then a tool without a limit is not
	// held up by them.
	for range limit {
		<-g.entered
	}
	if got := g.running.Load(); got != limit {
		t.Fatalf("%d calls running, want %d", got, limit)
	}
	if res := r.call("free", `{}`); res.IsError {
		t.Fatalf("free tool: %+v", res)
	}
	close(g.release)
	for _, res := range <-done {
		if res.IsError || res.Output != "done" {
			t.Fatalf("queued call: %+v", res)
		}
	}
	if m := g.max.Load(); m != limit {
		t.Fatalf("at most %d calls ran at once, want exactly the limit %d", m, limit)
	}
}

func TestGlobalConcurrencyLimitSpansTools(t *testing.T) {
	const limit = 2
	g := newGate()
	r := newRig(t, fmt.Sprintf(`{"maxConcurrency": %d}`, limit), g.tool("a"), g.tool("b"), g.tool("c"))
	results := make(chan tool.Result, 30)
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, _ := run(context.Background(), r.x, []string{"a", "b", "c"}[i%3], nil, "")
			results <- res
		}()
	}
	for range limit {
		<-g.entered
	}
	close(g.release)
	wg.Wait()
	close(results)
	for res := range results {
		if res.IsError {
			t.Fatalf("call failed: %+v", res)
		}
	}
	if m := g.max.Load(); m != limit {
		t.Fatalf("max running across tools = %d, want %d", m, limit)
	}
}

func TestExcessCallWaitsUntilItsDeadlineThenFails(t *testing.T) {
	g := newGate()
	r := newRig(t, `{"tools": {"held": {"maxConcurrency": 1}}}`, g.tool("held"))
	first := make(chan tool.Result, 1)
	go func() {
		res, _ := run(context.Background(), r.x, "held", nil, "")
		first <- res
	}()
	<-g.entered
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	res, src := run(ctx, r.x, "held", nil, "")
	want := "held: not started: waited for its concurrency limit of 1 (limits.tools.held.maxConcurrency) until the call's deadline; retry later"
	if !res.IsError || res.Outcome != tool.OutcomeTimeout || res.Output != want || src != "custom" {
		t.Fatalf("got %+v from %q, want timeout %q", res, src, want)
	}
	// A cancelled waiter is "canceled", not "timeout".
	cctx, ccancel := context.WithCancel(context.Background())
	ccancel()
	if res, _ := run(cctx, r.x, "held", nil, ""); res.Outcome != tool.OutcomeCanceled {
		t.Fatalf("cancelled waiter: %+v", res)
	}
	close(g.release)
	if res := <-first; res.IsError {
		t.Fatalf("the running call: %+v", res)
	}
	if g.max.Load() != 1 {
		t.Fatalf("max running %d", g.max.Load())
	}
}

func TestWaitingForASlotCountsAgainstTheTimeoutLimit(t *testing.T) {
	g := newGate()
	g.stubborn = true // the first call keeps its slot past its own timeout
	r := newRig(t, `{"tools": {"held": {"maxConcurrency": 1, "timeout": 30}}}`, g.tool("held"))
	first := make(chan tool.Result, 1)
	go func() {
		res, _ := run(context.Background(), r.x, "held", nil, "")
		first <- res
	}()
	<-g.entered
	// No caller deadline: the server's own timeout ends the wait.
	res, _ := run(context.Background(), r.x, "held", nil, "")
	if !res.IsError || res.Outcome != tool.OutcomeTimeout || !strings.Contains(res.Output, "not started: waited for its concurrency limit of 1") {
		t.Fatalf("got %+v", res)
	}
	// (The first call's outcome is not asserted: whether its own timer has
	// fired by now is up to the scheduler.)
	close(g.release)
	<-first
}

func TestLimitsSwapWhileCallsRun(t *testing.T) {
	g := newGate()
	r := newRig(t, `{"tools": {"held": {"maxConcurrency": 1}}}`, g.tool("held"))
	first := make(chan tool.Result, 1)
	go func() {
		res, _ := run(context.Background(), r.x, "held", nil, "")
		first <- res
	}()
	<-g.entered
	// Raise the limit: a new call gets in beside the one still running on
	// the old limit, and the old call's slot is released into the old
	// semaphore without blocking anyone.
	r.x.SetLimits(limits(t, `{"tools": {"held": {"maxConcurrency": 2}}}`))
	second := make(chan tool.Result, 1)
	go func() {
		res, _ := run(context.Background(), r.x, "held", nil, "")
		second <- res
	}()
	<-g.entered
	close(g.release)
	if a, b := <-first, <-second; a.IsError || b.IsError {
		t.Fatalf("results %+v %+v", a, b)
	}
}

func TestOutputTruncation(t *testing.T) {
	big := func(name, out string) tool.Tool {
		return tool.Must(tool.New(name, func(context.Context, tool.Call) tool.Result {
			return tool.Success(out, map[string]any{"kept": 1})
		}))
	}
	r := newRig(t, `{"maxOutputBytes": 10, "tools": {"roomy": {"maxOutputBytes": 0}, "tiny": {"maxOutputBytes": 5}}}`,
		big("long", "0123456789abcdef"), big("exact", "0123456789"), big("roomy", strings.Repeat("x", 100)), big("tiny", "ééééé"))

	res := r.call("long", `{}`)
	if res.Output != "0123456789\n[output truncated: 6 bytes omitted; limits.maxOutputBytes is 10]" || res.Metadata["truncated"] != true || res.Metadata["kept"] != 1 || res.IsError {
		t.Fatalf("long: %+v", res)
	}
	if !strings.Contains(res.Output, executor.TruncationMarker) {
		t.Fatal("marker constant not used")
	}
	if res := r.call("exact", `{}`); res.Output != "0123456789" || res.Metadata["truncated"] != nil {
		t.Fatalf("exact fit must not be truncated: %+v", res)
	}
	if res := r.call("roomy", `{}`); len(res.Output) != 100 || res.Metadata["truncated"] != nil {
		t.Fatalf("per-tool 0 must lift the cap: %+v", res)
	}
	// "é" is two bytes: a cap of 5 keeps two whole characters, never half of one.
	if res := r.call("tiny", `{}`); res.Output != "éé\n[output truncated: 6 bytes omitted; limits.maxOutputBytes is 5]" {
		t.Fatalf("tiny: %q", res.Output)
	}
}

func TestTimeoutLimitAndUnknown(t *testing.T) {
	r := newRig(t, `{"tools": {"debug_sleep": {"timeout": 20}}}`)
	if res := r.call("debug_sleep", `{"ms": 600000}`); res.Outcome != tool.OutcomeTimeout || res.Output != "debug_sleep: timed out after 20ms (limits.timeout)" {
		t.Fatalf("timeout: %+v", res)
	}
	res, src := run(context.Background(), r.x, "nope", nil, "")
	if res.Outcome != tool.OutcomeUnknownTool || src != metrics.UnknownLabel {
		t.Fatalf("unknown: %+v %s", res, src)
	}
	if got := value(r.m.Calls.WithLabelValues("unknown", "unknown", "unknown_tool", "grpc")); got != 1 {
		t.Fatalf("unknown counted %v times", got)
	}
}

func TestCallsFinishOnTheToolTheyStartedWith(t *testing.T) {
	started := make(chan struct{})
	release := make(chan struct{})
	v1 := tool.Must(tool.New("swap", func(context.Context, tool.Call) tool.Result {
		close(started)
		<-release
		return tool.Success("v1", nil)
	}))
	r := newRig(t, "", v1)
	out := make(chan tool.Result, 1)
	go func() { out <- r.call("swap", `{}`) }()
	<-started
	v2 := tool.Must(tool.New("swap", func(context.Context, tool.Call) tool.Result { return tool.Success("v2", nil) }))
	if err := r.reg.Replace(registry.Layer(sources.KindNative), []tool.Tool{v2}); err != nil {
		t.Fatal(err)
	}
	if res := r.call("swap", `{}`); res.Output != "v2" {
		t.Fatalf("new call ran %q", res.Output)
	}
	close(release)
	if res := <-out; res.Output != "v1" {
		t.Fatalf("in-flight call ended on %q, want the v1 it started with", res.Output)
	}
}

func BenchmarkExecuteValidated(b *testing.B) {
	r := newRig(b, "")
	args := json.RawMessage(`{"ms": 0}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if res, _ := run(ctx, r.x, "debug_sleep", args, ""); res.IsError {
			b.Fatal(res.Output)
		}
	}
}

// BenchmarkExecuteEcho is the executor's share of one debug_echo call: the
// path every call takes (table lookup, object check, permissive schema,
// metrics) around a tool that does almost nothing.
func BenchmarkExecuteEcho(b *testing.B) {
	r := newRig(b, "")
	args := json.RawMessage(`{"message":"hello, toolnexus","n":42,"tags":["a","b","c"]}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if res, _ := run(ctx, r.x, "debug_echo", args, ""); res.IsError {
			b.Fatal(res.Output)
		}
	}
}

// BenchmarkExecuteEchoPerPrincipalCap is BenchmarkExecuteEcho with a
// per-principal cap and a tool cap on the tool: the per-principal check
// is one sync.Map load and a channel send and receive. Budget: within
// 1.1x of BenchmarkExecuteEchoToolCap, and no allocation more.
func BenchmarkExecuteEchoPerPrincipalCap(b *testing.B) {
	benchEchoCapped(b, `{"tools": {"debug_echo": {"maxConcurrency": 8, "maxConcurrencyPerPrincipal": 4}}}`)
}

// BenchmarkExecuteEchoToolCap is the baseline of the row above.
func BenchmarkExecuteEchoToolCap(b *testing.B) {
	benchEchoCapped(b, `{"tools": {"debug_echo": {"maxConcurrency": 8}}}`)
}

func benchEchoCapped(b *testing.B, limitsJSON string) {
	r := newRig(b, limitsJSON)
	args := json.RawMessage(`{"message":"hello, toolnexus","n":42,"tags":["a","b","c"]}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if res, _ := run(ctx, r.x, "debug_echo", args, "agent-a"); res.IsError {
			b.Fatal(res.Output)
		}
	}
}

func BenchmarkExecuteInvalid(b *testing.B) {
	r := newRig(b, "")
	args := json.RawMessage(`{"ms": "x"}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if res, _ := run(ctx, r.x, "debug_sleep", args, ""); !res.IsError {
			b.Fatal("validated")
		}
	}
}

// value reads a counter without pulling in prometheus/testutil.
func value(c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		panic(err)
	}
	return m.GetCounter().GetValue()
}

// BenchmarkReplace10kWithExecutor is one registry Replace of a 10,000-tool
// layer including the executor's table rebuild (the writer-side cost that
// `make bench` row 3 puts next to running calls).
func BenchmarkReplace10kWithExecutor(b *testing.B) {
	r := newRig(b, "")
	tools := make([]tool.Tool, 10000)
	for i := range tools {
		tools[i] = tool.Must(tool.New(fmt.Sprintf("bulk_%05d", i), func(context.Context, tool.Call) tool.Result { return tool.Success("", nil) }))
	}
	id := registry.LayerID{Kind: sources.KindNative, Name: "bulk"}
	b.ReportAllocs()
	for b.Loop() {
		if err := r.reg.Replace(id, tools); err != nil {
			b.Fatal(err)
		}
	}
}

// A rich result's parts count against limits.maxOutputBytes too: parts
// that fit stay, the text part crossing the cap is cut, later media is
// replaced by a note naming what was dropped.
func TestContentTruncation(t *testing.T) {
	img := bytes.Repeat([]byte{0xff}, 8)
	rich := tool.Must(tool.New("rich", func(context.Context, tool.Call) tool.Result {
		return tool.Rich(tool.Image("image/png", img), tool.Text("ééé"), tool.Audio("audio/wav", img), tool.Text(""))
	}))
	small := tool.Must(tool.New("small", func(context.Context, tool.Call) tool.Result {
		return tool.Rich(tool.Text("ok"), tool.Image("image/png", []byte{1}))
	}))
	r := newRig(t, `{"maxOutputBytes": 11}`, rich, small)
	res := r.call("rich", `{}`)
	want := []tool.Content{
		tool.Image("image/png", img),
		tool.Text("é\n[output truncated: 4 bytes omitted; limits.maxOutputBytes is 11]"),
		tool.Text("[audio audio/wav omitted: 8 bytes; limits.maxOutputBytes is 11]"),
		tool.Text(""),
	}
	if !reflect.DeepEqual(res.Content, want) || res.Metadata["truncated"] != true || res.Output != "ééé\n" {
		t.Fatalf("rich:\n got %+v\nwant %+v", res, want)
	}
	if res := r.call("small", `{}`); len(res.Content) != 2 || res.Metadata["truncated"] != nil {
		t.Fatalf("small must not be truncated: %+v", res)
	}
}
