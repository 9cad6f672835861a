package core_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/inproc"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

func TestArgumentErrorsOverGRPC(t *testing.T) {
	t.Parallel()
	f := inproc.Serve(t, inproc.DebugOnly)
	cases := []struct{ args, want string }{
		{`{"ms":"x"}`, "invalid arguments for debug_sleep (fix these and call again):\n- ms: expected integer, got string"},
		{`{}`, "invalid arguments for debug_sleep (fix these and call again):\n- ms: missing; this field is required"},
		{`{"ms": 5, "msec": 5}`, "invalid arguments for debug_sleep (fix these and call again):\n- msec: unknown property; remove it (this tool takes: ms)"},
	}
	for _, c := range cases {
		res := f.Execute(t, context.Background(), "debug_sleep", c.args)
		if !res.GetIsError() || res.GetOutcome() != pb.Outcome_OUTCOME_INVALID_ARGUMENTS || res.GetOutput() != c.want {
			t.Errorf("debug_sleep %s = {%q %v %v}\nwant {%q invalid_arguments}", c.args, res.GetOutput(), res.GetIsError(), res.GetOutcome(), c.want)
		}
	}
	// Struct arguments are checked the same way.
	resp, err := f.Registry.Execute(context.Background(), &pb.ExecuteRequest{Name: "debug_sleep",
		Input: &pb.ExecuteRequest_Arguments{Arguments: inproc.Struct(t, map[string]any{"ms": "x"})}})
	if err != nil || resp.GetResult().GetOutput() != cases[0].want {
		t.Fatalf("struct arguments: %v %v", err, resp.GetResult())
	}
	if line := testutil.MetricLine(f.Scrape(t), "toolnexus_tool_calls_total", `tool="debug_sleep"`, `outcome="invalid_arguments"`); !strings.HasSuffix(line, " 4") {
		t.Fatalf("invalid_arguments count: %q", line)
	}
}

func TestArgumentCheckingSwitchedOff(t *testing.T) {
	t.Parallel()
	// The tool's own check answers instead of the server's.
	const own = `debug_sleep: "ms" must be an integer >= 0`
	for _, cfg := range []string{
		`{"debug": true, "builtins": false, "skills": [], "limits": {"validateArguments": false}}`,
		`{"debug": true, "builtins": false, "skills": [], "limits": {"tools": {"debug_sleep": {"validateArguments": false}}}}`,
	} {
		f := inproc.Serve(t, cfg)
		if res := f.Execute(t, context.Background(), "debug_sleep", `{"ms":"x"}`); res.GetOutput() != own {
			t.Errorf("%s: got %q, want the tool's own %q", cfg, res.GetOutput(), own)
		}
		wantServerCheck := strings.Contains(cfg, `"tools"`)
		res := f.Execute(t, context.Background(), "debug_fail", `{"message": 7}`)
		if got := res.GetOutcome() == pb.Outcome_OUTCOME_INVALID_ARGUMENTS; got != wantServerCheck {
			t.Errorf("%s: debug_fail validated = %v, want %v (%q)", cfg, got, wantServerCheck, res.GetOutput())
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// peak is a native tool that records how many of its calls run at once;
// each call waits until released.
type peak struct {
	running, max atomic.Int64
	entered      chan struct{}
	release      chan struct{}
	// stubborn calls ignore their context: they hold their concurrency
	// slot until released, even past their own timeout.
	stubborn bool
}

func newPeak() *peak { return &peak{entered: make(chan struct{}, 256), release: make(chan struct{})} }

func (p *peak) tool(name string) tool.Tool {
	return tool.Must(tool.New(name, func(ctx context.Context, _ tool.Call) tool.Result {
		n := p.running.Add(1)
		defer p.running.Add(-1)
		for m := p.max.Load(); n > m && !p.max.CompareAndSwap(m, n); m = p.max.Load() {
		}
		p.entered <- struct{}{}
		done := ctx.Done()
		if p.stubborn {
			done = nil
		}
		select {
		case <-p.release:
			return tool.Success("done", nil)
		case <-done:
			return tool.ContextResult(ctx, name)
		}
	}))
}

// flood makes n concurrent Execute calls spread over names, releases the
// tool once want calls are inside, and returns every result.
func flood(t *testing.T, f *inproc.Rig, p *peak, n, want int, names ...string) []*pb.ToolResult {
	t.Helper()
	results := make([]*pb.ToolResult, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := f.Registry.Execute(context.Background(), &pb.ExecuteRequest{Name: names[i%len(names)]})
			results[i], errs[i] = resp.GetResult(), err
		}()
	}
	for range want {
		<-p.entered
	}
	close(p.release)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return results
}

func TestConcurrencyLimitsHoldOverGRPC(t *testing.T) {
	t.Parallel()
	t.Run("per tool", func(t *testing.T) {
		p := newPeak()
		f := inproc.Serve(t, `{"builtins": false, "skills": [], "limits": {"tools": {"held": {"maxConcurrency": 3}}}}`, p.tool("held"))
		for _, r := range flood(t, f, p, 24, 3, "held") {
			if r.GetIsError() {
				t.Fatalf("queued call failed: %v", r)
			}
		}
		if m := p.max.Load(); m != 3 {
			t.Fatalf("peak %d calls at once, want the limit 3", m)
		}
	})
	t.Run("global", func(t *testing.T) {
		p := newPeak()
		f := inproc.Serve(t, `{"builtins": false, "skills": [], "limits": {"maxConcurrency": 2}}`, p.tool("x"), p.tool("y"))
		flood(t, f, p, 20, 2, "x", "y")
		if m := p.max.Load(); m != 2 {
			t.Fatalf("peak %d calls at once across tools, want the global limit 2", m)
		}
	})
}

func TestExcessCallWaitsThenIsAnError(t *testing.T) {
	t.Parallel()
	p := newPeak()
	p.stubborn = true // the first "quick" call must keep its slot past its 40ms
	f := inproc.Serve(t, `{"builtins": false, "skills": [], "limits": {"tools": {"held": {"maxConcurrency": 1, "timeout": 60000}, "quick": {"maxConcurrency": 1, "timeout": 40}}}}`,
		p.tool("held"), p.tool("quick"))
	first := make(chan *pb.ToolResult, 1)
	go func() {
		resp, _ := f.Registry.Execute(context.Background(), &pb.ExecuteRequest{Name: "held"})
		first <- resp.GetResult()
	}()
	<-p.entered
	// The caller's deadline ends the wait: the caller gets the status it asked for.
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Millisecond)
	defer cancel()
	if _, err := f.Registry.Execute(ctx, &pb.ExecuteRequest{Name: "held"}); status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("caller deadline: %v", err)
	}
	// The server's timeout ends the wait: the caller gets an is_error result.
	go func() { _, _ = f.Registry.Execute(context.Background(), &pb.ExecuteRequest{Name: "quick"}) }()
	<-p.entered
	res := f.Execute(t, context.Background(), "quick", `{}`)
	if !res.GetIsError() || res.GetOutcome() != pb.Outcome_OUTCOME_TIMEOUT ||
		res.GetOutput() != "quick: not started: waited for its concurrency limit of 1 (limits.tools.quick.maxConcurrency) until the call's deadline; retry later" {
		t.Fatalf("server timeout while waiting: %v", res)
	}
	close(p.release)
	if r := <-first; r.GetIsError() {
		t.Fatalf("the running call: %v", r)
	}
}

func TestOutputTruncatedWithMarkerOverGRPC(t *testing.T) {
	t.Parallel()
	f := inproc.Serve(t, `{"debug": true, "builtins": false, "skills": [], "limits": {"maxOutputBytes": 16}}`)
	res := f.Execute(t, context.Background(), "debug_echo", `{"text": "abcdefghijklmnopqrstuvwxyz"}`)
	want := `{"text":"abcdefg` + "\n[output truncated: 21 bytes omitted; limits.maxOutputBytes is 16]"
	if res.GetIsError() || res.GetOutput() != want {
		t.Fatalf("output %q, want %q", res.GetOutput(), want)
	}
	if v := res.GetMetadata().GetFields()["truncated"]; v == nil || !v.GetBoolValue() {
		t.Fatalf("metadata %v lacks truncated=true", res.GetMetadata())
	}
	if res := f.Execute(t, context.Background(), "debug_echo", `{"a":1}`); res.GetOutput() != `{"a":1}` || res.GetMetadata().GetFields()["truncated"] != nil {
		t.Fatalf("short output touched: %v", res)
	}
}

func TestRequestSizeLimit(t *testing.T) {
	t.Parallel()
	f := inproc.Serve(t, `{"debug": true, "builtins": false, "skills": [], "limits": {"maxRequestBytes": 2048}}`)
	big := fmt.Sprintf(`{"blob": %q}`, strings.Repeat("x", 4096))
	_, err := f.Registry.Execute(context.Background(), &pb.ExecuteRequest{Name: "debug_echo", Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: big}})
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("oversized request: %v, want ResourceExhausted", err)
	}
	// The connection survives; requests under the limit work.
	if res := f.Execute(t, context.Background(), "debug_echo", `{"small": true}`); res.GetIsError() {
		t.Fatalf("small request after the big one: %v", res)
	}
}
