package executor_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// TestArguments: none is {}, an object passes (checked against the
// schema), anything else ends the call as invalid arguments.
func TestArguments(t *testing.T) {
	r := newRig(t, "")
	p := r.x.Prepared("debug_echo")
	for _, c := range []struct {
		name, args string
		pass       bool
	}{
		{"none is {}", "", true},
		{"object", `{"x": 1}`, true},
		{"array", `[1]`, false},
		{"broken", `{"x":`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			args, refused, ok := p.Arguments(json.RawMessage(c.args))
			if ok != c.pass || (!c.pass && refused.Outcome != tool.OutcomeInvalidArguments) {
				t.Fatalf("%+v passed=%v", refused, ok)
			}
			if c.pass && len(args) == 0 {
				t.Fatal("no arguments for the tool")
			}
		})
	}
}

// TestSlotTimeout: a call under its slot runs with limits.timeout as its
// deadline; when that fires, a tool that said nothing is told which limit
// ended it, and one that reports its context's end names the limit too
// (the context's cause), without the executor reading its text.
func TestSlotTimeout(t *testing.T) {
	r := newRig(t, `{"timeout": 20}`)
	p := r.x.Prepared("debug_echo")
	ctx := context.Background()
	for _, c := range []struct {
		name string
		tool func(ctx context.Context) tool.Result
		want string
	}{
		{"silent", func(ctx context.Context) tool.Result { <-ctx.Done(); return tool.Result{} }, "debug_echo: timed out after 20ms (limits.timeout)"},
		{"context result", func(ctx context.Context) tool.Result { <-ctx.Done(); return tool.ContextResult(ctx, "mine") }, "mine: timed out after 20ms (limits.timeout)"},
		{"own text", func(ctx context.Context) tool.Result { <-ctx.Done(); return tool.Failure("partial output", nil) }, "partial output"},
	} {
		t.Run(c.name, func(t *testing.T) {
			slot, refused, ok := p.Acquire(ctx, "")
			if !ok {
				t.Fatalf("%+v", refused)
			}
			defer slot.Release()
			if _, ok := slot.Context().Deadline(); !ok {
				t.Fatal("no deadline")
			}
			res := slot.Settle(ctx, c.tool(slot.Context()))
			if res.Outcome != tool.OutcomeTimeout || !res.IsError || res.Output != c.want {
				t.Fatalf("%+v, want %q", res, c.want)
			}
		})
	}
	// The caller's own deadline, first: its own words, no limit named.
	cctx, cancel := context.WithTimeout(ctx, 5*time.Millisecond)
	defer cancel()
	slot, _, _ := p.Acquire(cctx, "")
	defer slot.Release()
	<-slot.Context().Done()
	if res := slot.Settle(cctx, tool.ContextResult(slot.Context(), "mine")); res.Outcome != tool.OutcomeTimeout || strings.Contains(res.Output, "limits.timeout") {
		t.Fatalf("%+v", res)
	}
}
