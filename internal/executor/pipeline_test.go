package executor_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/internal/executor"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// record is a step that notes it ran, for the order tests.
func record(name string, seen *[]string) executor.Step {
	return func(next executor.Handler) executor.Handler {
		return func(ctx context.Context, c executor.Call) tool.Result {
			*seen = append(*seen, name)
			return next(ctx, c)
		}
	}
}

// TestComposeOrder: steps run in the order given, then the tool; a step
// that ends the call stops the rest, the tool included.
func TestComposeOrder(t *testing.T) {
	r := newRig(t, "")
	var seen []string
	r.x.Compose(record("a", &seen), record("b", &seen), r.x.Limits)
	if res, _ := r.x.Execute(context.Background(), executor.Request{Name: "debug_echo", Arguments: json.RawMessage(`{"x":1}`)}); res.IsError {
		t.Fatalf("%+v", res)
	}
	if strings.Join(seen, ",") != "a,b" {
		t.Fatalf("order %v", seen)
	}
	seen = nil
	stop := func(executor.Handler) executor.Handler {
		return func(context.Context, executor.Call) tool.Result { return tool.FailureWith(tool.OutcomeDenied, "stopped") }
	}
	r.x.Compose(record("a", &seen), stop, record("c", &seen))
	if res, _ := r.x.Execute(context.Background(), executor.Request{Name: "debug_echo"}); res.Output != "stopped" || strings.Join(seen, ",") != "a" {
		t.Fatalf("%+v after %v", res, seen)
	}
}

// run drives one step alone in front of a handler that reports what it
// was handed.
func runStep(t *testing.T, r *rig, step executor.Step, req executor.Request) (tool.Result, *executor.Call) {
	t.Helper()
	var got *executor.Call
	r.x.Compose(step, func(executor.Handler) executor.Handler {
		return func(_ context.Context, c executor.Call) tool.Result {
			got = &c
			return tool.Result{Output: "passed"}
		}
	})
	res, _ := r.x.Execute(context.Background(), req)
	return res, got
}

func TestStepVisible(t *testing.T) {
	r := newRig(t, "")
	for _, c := range []struct {
		name  string
		allow executor.Allow
		pass  bool
	}{
		{"no allowlist", nil, true},
		{"allowed", func(string, string) bool { return true }, true},
		{"hidden", func(string, string) bool { return false }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, got := runStep(t, r, executor.Visible, executor.Request{Name: "debug_echo", Allow: c.allow})
			if (got != nil) != c.pass || (!c.pass && res.Outcome != tool.OutcomeDenied) {
				t.Fatalf("%+v passed=%v", res, got != nil)
			}
		})
	}
}

func TestStepValidate(t *testing.T) {
	r := newRig(t, "")
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
			res, got := runStep(t, r, executor.Validate, executor.Request{Name: "debug_echo", Arguments: json.RawMessage(c.args)})
			if (got != nil) != c.pass || (!c.pass && res.Outcome != tool.OutcomeInvalidArguments) {
				t.Fatalf("%+v passed=%v", res, got != nil)
			}
			if c.pass && len(got.Args) == 0 {
				t.Fatal("the next step got no arguments")
			}
		})
	}
}

type stepGate struct {
	refuse bool
	answer *tool.Answer
}

func (g stepGate) Check(_ context.Context, _ *registry.Entry, _ json.RawMessage, _ *tool.Answer) (*tool.Result, *tool.Answer) {
	if g.refuse {
		r := tool.FailureWith(tool.OutcomeDenied, "policy says no")
		return &r, nil
	}
	return nil, g.answer
}

func TestStepGated(t *testing.T) {
	r := newRig(t, "")
	mine := &tool.Answer{ID: "kept"}
	for _, c := range []struct {
		name string
		gate executor.Gate
		pass bool
		want *tool.Answer
	}{
		{"no gate", nil, true, &tool.Answer{ID: "caller's"}},
		{"refused", stepGate{refuse: true}, false, nil},
		{"consumes the answer", stepGate{}, true, nil},
		{"hands on an answer", stepGate{answer: mine}, true, mine},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, got := runStep(t, r, executor.Gated, executor.Request{Name: "debug_echo", Gate: c.gate, Answer: &tool.Answer{ID: "caller's"}})
			if (got != nil) != c.pass || (!c.pass && res.Output != "policy says no") {
				t.Fatalf("%+v passed=%v", res, got != nil)
			}
			if c.pass && (got.Answer == nil) != (c.want == nil) || (c.pass && got.Answer != nil && got.Answer.ID != c.want.ID) {
				t.Fatalf("answer handed on %+v, want %+v", got.Answer, c.want)
			}
		})
	}
}

// TestStepLimits: the step bounds the rest of the call in time and says
// which limit fired.
func TestStepLimits(t *testing.T) {
	r := newRig(t, `{"timeout": 1000}`)
	r.x.Compose(r.x.Limits, func(executor.Handler) executor.Handler {
		return func(ctx context.Context, c executor.Call) tool.Result {
			if _, ok := ctx.Deadline(); !ok {
				return tool.Result{Output: "no deadline"}
			}
			<-ctx.Done()
			return tool.Result{}
		}
	})
	res, _ := r.x.Execute(context.Background(), executor.Request{Name: "debug_echo"})
	if res.Outcome != tool.OutcomeTimeout || !strings.Contains(res.Output, "limits.timeout") {
		t.Fatalf("%+v", res)
	}
}
