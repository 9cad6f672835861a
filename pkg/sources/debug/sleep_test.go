package debug_test

import (
	"context"
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"

	"github.com/toolnexus/toolnexus/pkg/sources/debug"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

func sleepTool(t *testing.T) tool.Tool {
	for _, tl := range debug.Tools() {
		if tl.Name == "debug_sleep" {
			return tl
		}
	}
	t.Fatal("no debug_sleep")
	return tool.Tool{}
}

// In a synctest bubble the clock is fake: a ten-minute sleep takes no real
// time and ends exactly when it should.
func TestSleepWaitsItsTime(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		res := sleepTool(t).Run(t.Context(), tool.Call{Arguments: json.RawMessage(`{"ms":600000}`)})
		if res.IsError || res.Output != "slept 600000ms" {
			t.Fatalf("got %+v", res)
		}
		if d := time.Since(start); d != 10*time.Minute {
			t.Errorf("slept %v, want 10m", d)
		}
	})
}

// A caller's deadline ends the sleep at the deadline, as a timeout.
func TestSleepEndsAtTheDeadline(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		start := time.Now()
		res := sleepTool(t).Run(ctx, tool.Call{Arguments: json.RawMessage(`{"ms":3600000}`)})
		if res.Resolved() != tool.OutcomeTimeout {
			t.Fatalf("got %+v, want a timeout", res)
		}
		if d := time.Since(start); d != time.Second {
			t.Errorf("returned after %v, want 1s", d)
		}
	})
}
