package tool_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

func TestOutcomeString(t *testing.T) {
	t.Parallel()
	want := map[tool.Outcome]string{
		tool.OutcomeUnspecified:      "unspecified",
		tool.OutcomeOK:               "ok",
		tool.OutcomeToolError:        "tool_error",
		tool.OutcomeUnknownTool:      "unknown_tool",
		tool.OutcomePanic:            "panic",
		tool.OutcomeTimeout:          "timeout",
		tool.OutcomeCanceled:         "canceled",
		tool.OutcomeInvalidArguments: "invalid_arguments",
		tool.OutcomeDenied:           "denied",
		tool.OutcomePending:          "pending",
		tool.Outcome(200):            "unspecified",
	}
	for o, name := range want {
		if got := o.String(); got != name {
			t.Errorf("Outcome(%d).String() = %q, want %q", uint8(o), got, name)
		}
	}
	// The values mirror toolnexus.v1.Outcome, whose numbering is pinned.
	if tool.OutcomePending != 9 || tool.OutcomeOK != 1 {
		t.Errorf("outcome numbering drifted from the proto enum: ok=%d pending=%d", tool.OutcomeOK, tool.OutcomePending)
	}
}

func TestSuccessFailure(t *testing.T) {
	t.Parallel()
	meta := map[string]any{"exitCode": 0}
	s := tool.Success("out", meta)
	if s.Output != "out" || s.IsError || s.Metadata["exitCode"] != 0 || s.Resolved() != tool.OutcomeOK {
		t.Errorf("Success = %+v (resolved %v)", s, s.Resolved())
	}
	f := tool.Failure("bad", nil)
	if f.Output != "bad" || !f.IsError || f.Metadata != nil || f.Resolved() != tool.OutcomeToolError {
		t.Errorf("Failure = %+v (resolved %v)", f, f.Resolved())
	}
	d := tool.FailureWith(tool.OutcomeDenied, "no")
	if d.Output != "no" || !d.IsError || d.Resolved() != tool.OutcomeDenied {
		t.Errorf("FailureWith = %+v (resolved %v)", d, d.Resolved())
	}
}

func TestSuspend(t *testing.T) {
	t.Parallel()
	exp := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	p := tool.Pending{ID: "p1", Kind: "confirm", Prompt: "Proceed?", URL: "https://x.test", ExpiresAt: exp}
	r := tool.Suspend(p)
	if !r.IsError || r.Outcome != tool.OutcomePending || r.Output != "Proceed?" {
		t.Errorf("Suspend = %+v, want is_error, pending, output = prompt", r)
	}
	if r.Pending == nil || !reflect.DeepEqual(*r.Pending, p) {
		t.Errorf("Pending = %+v, want %+v", r.Pending, p)
	}
}

func TestContextResult(t *testing.T) {
	t.Parallel()
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel2()
	causeCanceled, cancel3 := context.WithCancelCause(context.Background())
	cancel3(context.DeadlineExceeded) // ctx.Err is still Canceled: the cause is not the deadline
	tests := []struct {
		name    string
		ctx     context.Context
		output  string
		outcome tool.Outcome
	}{
		{"canceled", canceled, "bash: canceled", tool.OutcomeCanceled},
		{"deadline", expired, "bash: deadline exceeded", tool.OutcomeTimeout},
		{"cancel with cause", causeCanceled, "bash: canceled", tool.OutcomeCanceled},
	}
	for _, tt := range tests {
		r := tool.ContextResult(tt.ctx, "bash")
		if r.Output != tt.output || r.Outcome != tt.outcome || !r.IsError {
			t.Errorf("%s: got %+v, want %q %v", tt.name, r, tt.output, tt.outcome)
		}
	}
}
