package core

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/executor"
	"github.com/toolnexus/toolnexus/internal/limits"
	"github.com/toolnexus/toolnexus/internal/metrics"
	"github.com/toolnexus/toolnexus/internal/ratelimit"
	"github.com/toolnexus/toolnexus/internal/session"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/debug"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// passed is the handler after a step under test: it reports that the call
// got through, and the workspace it got.
func passed(ran *int, ws *string) handler {
	return func(ctx context.Context, f flow) tool.Result {
		*ran++
		if w := tool.WorkspaceFrom(ctx); w != nil && ws != nil {
			*ws = w.Dir()
		}
		return tool.Result{Output: "ran"}
	}
}

// stepCall is a call to a debug tool as the steps before would hand it on.
func stepCall(t *testing.T, x *executor.Executor, principal, session, name string) flow {
	t.Helper()
	p := x.Prepared(name)
	if p == nil {
		t.Fatalf("no tool %s", name)
	}
	call := Call{Name: name, Session: session}
	if principal != "" {
		call.Caller = auth.NewPrincipal(principal, nil, false)
	}
	return flow{Call: call, tool: p}
}

// debugTools is an executor over the debug tools.
func debugTools(t *testing.T) *executor.Executor {
	t.Helper()
	reg := registry.New()
	if err := reg.Replace(registry.Layer(sources.KindDebug), debug.Tools()); err != nil {
		t.Fatal(err)
	}
	x := executor.New(reg, metrics.New(prometheus.NewRegistry()).ForExecutor(), limits.Limits{}, nil)
	t.Cleanup(x.Close)
	return x
}

// TestRateLimitStep: the step alone throttles with a typed result naming
// the limit and the delay, lets another principal through, and holds the
// principal's concurrent slot only while the rest of the call runs.
func TestRateLimitStep(t *testing.T) {
	c := &Core{}
	c.pol.metrics = metrics.NewPolicy(prometheus.NewRegistry(), []string{"debug"})
	x := debugTools(t)
	c.limiter.Store(ratelimit.New(config.RateLimits{Principals: map[string]config.PrincipalRate{
		"a": {Rate: config.Rate{CallsPerSecond: 0.001, Burst: 1}}, "b": {Concurrent: 1}}}))
	ran := 0
	h := c.rateLimitStep(passed(&ran, nil))
	ctx := context.Background()
	if r := h(ctx, stepCall(t, x, "a", "", "debug_echo")); r.Throttled != nil || ran != 1 {
		t.Fatalf("first call: %+v", r)
	}
	r := h(ctx, stepCall(t, x, "a", "", "debug_echo"))
	if r.Throttled == nil || r.Throttled.Limit != "limits.principals.a.callsPerSecond" || r.Throttled.RetryAfter <= 0 || ran != 1 {
		t.Fatalf("second call: %+v (ran %d)", r, ran)
	}
	for range 3 { // one at a time, but one after another is fine
		if r := h(ctx, stepCall(t, x, "b", "", "debug_echo")); r.Throttled != nil {
			t.Fatalf("b: %+v", r)
		}
	}
	c.limiter.Store(nil)
	if r := h(ctx, stepCall(t, x, "a", "", "debug_echo")); r.Throttled != nil {
		t.Fatalf("with no limits: %+v", r)
	}
}

// TestSessionStep: the step alone runs a call with a session in that
// session's workspace, refuses a bad id, and leaves a call without one in
// the shared workspace.
func TestSessionStep(t *testing.T) {
	m, err := session.New(session.Options{Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	c := &Core{sessions: m}
	c.cfg.Store(&config.Config{})
	x := debugTools(t)
	ran, ws := 0, ""
	h := c.sessionStep(passed(&ran, &ws))
	ctx := context.Background()
	if r := h(ctx, stepCall(t, x, "alice", "s1", "debug_echo")); r.IsError || ran != 1 || ws == "" {
		t.Fatalf("in s1: %+v, workspace %q", r, ws)
	}
	if l := m.List("alice", false); len(l) != 1 || l[0].ID != "s1" {
		t.Fatalf("sessions %+v", l)
	}
	if r := h(ctx, stepCall(t, x, "alice", "../up", "debug_echo")); r.Outcome != tool.OutcomeInvalidArguments || ran != 1 {
		t.Fatalf("bad id: %+v", r)
	}
	ws = ""
	if r := h(ctx, stepCall(t, x, "alice", "", "debug_echo")); r.IsError || ran != 2 || ws != "" {
		t.Fatalf("no session: %+v, workspace %q", r, ws)
	}
}
