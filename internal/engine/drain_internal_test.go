package engine

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// probe is a source like an MCP server: its tool only works while the
// source is open, and Close cuts running calls off.
type probe struct {
	gen     string
	pub     sources.Publisher
	closed  chan struct{}
	entered chan struct{}
	release chan struct{}
	closes  atomic.Int32
}

var probeLayer = registry.LayerID{Kind: sources.KindMCP, Name: "probe"}

func newProbe(gen string) *probe {
	return &probe{gen: gen, closed: make(chan struct{}), entered: make(chan struct{}, 8), release: make(chan struct{})}
}

func (p *probe) Layer() registry.LayerID { return probeLayer }
func (p *probe) Status() sources.Status {
	return sources.Status{Layer: probeLayer, State: sources.Connected}
}
func (p *probe) Close(context.Context) error {
	if p.closes.Add(1) == 1 {
		close(p.closed)
	}
	return nil
}

func (p *probe) Start(_ context.Context, pub sources.Publisher) error {
	p.pub = pub
	return pub.Replace(probeLayer, []tool.Tool{tool.Must(tool.New("probe_wait", func(ctx context.Context, _ tool.Call) tool.Result {
		p.entered <- struct{}{}
		select {
		case <-p.release:
			return tool.Success("finished on "+p.gen, nil)
		case <-p.closed:
			return tool.Failure("cut off: the source was closed under the call", nil)
		case <-ctx.Done():
			return tool.ContextResult(ctx, "probe_wait")
		}
	}))})
}

// withProbes makes every plan include the probe instance, rebuilt whenever
// cfg.Debug flips; built probes are sent on the returned channel.
func withProbes(t *testing.T) <-chan *probe {
	built := make(chan *probe, 8)
	testPlanHook = func(cfg *config.Config) []planned {
		gen := "off"
		if cfg.Debug {
			gen = "on"
		}
		return []planned{{id: probeLayer, fingerprint: gen, build: func() sources.Source {
			p := newProbe(gen)
			built <- p
			return p
		}}}
	}
	t.Cleanup(func() { testPlanHook = nil })
	return built
}

func cfg(t *testing.T, debug bool) *config.Config {
	t.Helper()
	text := `{"debug": false}`
	if debug {
		text = `{"debug": true}`
	}
	c, err := config.Parse([]byte(text), "", filepath.Join(os.TempDir(), "toolnexus-engine-test"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newTestEngine(t *testing.T, drain time.Duration) (*Engine, *registry.Registry) {
	reg := registry.New()
	e := New(reg, Options{DrainTimeout: drain,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(func() { _ = e.Close(context.Background()) })
	return e, reg
}

func TestReplacedSourceClosesOnlyAfterItsRunningCalls(t *testing.T) {
	built := withProbes(t)
	e, reg := newTestEngine(t, time.Minute)
	if _, err := e.Apply(cfg(t, false)); err != nil {
		t.Fatal(err)
	}
	old := <-built
	result := make(chan tool.Result, 1)
	go func() {
		result <- testutil.Direct{Reg: reg}.Execute(context.Background(), "probe_wait", tool.Call{Name: "probe_wait"})
	}()
	<-old.entered

	rep, err := e.Apply(cfg(t, true))
	if err != nil || len(rep.Started) != 2 { // probe and debug
		t.Fatalf("reload: %v %v", rep.Started, err)
	}
	next := <-built
	// New calls go to the new instance at once...
	go func() {
		_ = testutil.Direct{Reg: reg}.Execute(context.Background(), "probe_wait", tool.Call{Name: "probe_wait"})
	}()
	<-next.entered
	close(next.release)
	// ...while the old one stays open for the call it is running.
	select {
	case <-old.closed:
		t.Fatal("the replaced source was closed under a running call")
	default:
	}
	// A late publish from the old instance cannot clobber the new layer.
	if err := old.pub.Replace(probeLayer, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := reg.Snapshot().Lookup("probe_wait"); !ok {
		t.Fatal("the retired instance overwrote its successor's tools")
	}
	close(old.release)
	if r := <-result; r.IsError || r.Output != "finished on off" {
		t.Fatalf("in-flight call: %+v; want it finished on the instance it started on", r)
	}
	<-old.closed // closed once the call is done
	select {
	case <-next.closed:
		t.Fatal("the current instance was closed")
	default:
	}
}

func TestRemovedSourceWaitsAtMostTheDrainTimeout(t *testing.T) {
	built := withProbes(t)
	e, reg := newTestEngine(t, 30*time.Millisecond)
	if _, err := e.Apply(cfg(t, false)); err != nil {
		t.Fatal(err)
	}
	old := <-built
	result := make(chan tool.Result, 1)
	go func() {
		result <- testutil.Direct{Reg: reg}.Execute(context.Background(), "probe_wait", tool.Call{Name: "probe_wait"})
	}()
	<-old.entered
	testPlanHook = nil // the next config no longer has the probe
	rep, err := e.Apply(cfg(t, false))
	if err != nil || len(rep.Removed) != 1 || rep.Removed[0] != probeLayer {
		t.Fatalf("removal: %v %v", rep.Removed, err)
	}
	if _, ok := reg.Snapshot().Lookup("probe_wait"); ok {
		t.Fatal("removed tools still listed")
	}
	// The call never ends by itself: after the drain timeout the source is
	// closed anyway, which cuts the call off.
	<-old.closed
	if r := <-result; !r.IsError {
		t.Fatalf("call on a closed source: %+v", r)
	}
}

func TestCloseDoesNotWaitForDrains(t *testing.T) {
	built := withProbes(t)
	e, reg := newTestEngine(t, time.Hour)
	if _, err := e.Apply(cfg(t, false)); err != nil {
		t.Fatal(err)
	}
	old := <-built
	result := make(chan tool.Result, 1)
	go func() {
		result <- testutil.Direct{Reg: reg}.Execute(context.Background(), "probe_wait", tool.Call{Name: "probe_wait"})
	}()
	<-old.entered
	if _, err := e.Apply(cfg(t, true)); err != nil {
		t.Fatal(err)
	}
	next := <-built
	if err := e.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Close returned: both instances are closed, the old one although its
	// call was still running and the drain timeout is an hour.
	for _, p := range []*probe{old, next} {
		select {
		case <-p.closed:
		default:
			t.Fatalf("instance %s not closed by Close", p.gen)
		}
	}
	if r := <-result; !r.IsError {
		t.Fatalf("call after Close: %+v", r)
	}
	if _, err := e.Apply(cfg(t, true)); err == nil {
		t.Fatal("Apply after Close must fail")
	}
}
