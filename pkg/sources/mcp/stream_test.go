package mcp_test

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/sources/mcp"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

func TestRichContentIsKept(t *testing.T) {
	transports(t, func(t *testing.T, cfg mcp.ServerConfig, _ []string) {
		reg, _ := start(t, "r", cfg)
		res := call(t, reg, "r_rich", `{}`)
		want := []tool.Content{
			tool.Text("a picture"),
			tool.Image("image/png", []byte{0x89, 'P', 'N', 'G'}),
			tool.Audio("audio/wav", []byte("RIFF")),
			tool.TextResource("file:///r.md", "text/markdown", "# r"),
			tool.BlobResource("file:///b.bin", "application/octet-stream", []byte{0, 1, 2}),
			tool.ResourceLink("file:///l.txt", "l.txt", "text/plain"),
		}
		if res.IsError || res.Output != "a picture" || !reflect.DeepEqual(res.Content, want) {
			t.Fatalf("rich:\n got %+v\nwant %+v", res, want)
		}
		// Text only stays text only.
		if res := call(t, reg, "r_multi", `{}`); res.Output != "one\ntwo" || res.Content != nil {
			t.Fatalf("multi: %+v", res)
		}
	})
}

// recorder is a sink that keeps the events in order.
type recorder struct {
	mu     sync.Mutex
	events []tool.Event
}

func (r *recorder) sink(e tool.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) take() []tool.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.events
	r.events = nil
	return out
}

// The server's progress and log notifications reach the streaming caller,
// all of them before the call returns its result — every time, not just
// when the scheduler is kind: the call is repeated.
func TestProgressAndLogsRelayedBeforeTheResult(t *testing.T) {
	transports(t, func(t *testing.T, cfg mcp.ServerConfig, _ []string) {
		reg, _ := start(t, "p", cfg)
		for range 20 {
			rec := &recorder{}
			ctx := tool.WithEvents(context.Background(), rec.sink)
			res := testutil.Direct{Reg: reg}.Execute(ctx, "p_report", tool.Call{Arguments: json.RawMessage(`{}`)})
			got := rec.take()
			if res.Output != "reported" {
				t.Fatalf("result %+v", res)
			}
			var progress []float64
			logs := 0
			for _, e := range got {
				switch e.Kind {
				case tool.EventProgress:
					progress = append(progress, e.Progress)
					if e.Total != 3 || !strings.HasPrefix(e.Message, "step ") {
						t.Fatalf("progress %+v", e)
					}
				case tool.EventLog:
					logs++
					if e.Level != "info" || e.Logger != "report" || e.Data.(map[string]any)["step"] == nil {
						t.Fatalf("log %+v", e)
					}
				}
			}
			if !slices.Equal(progress, []float64{1, 2, 3}) || logs != 3 {
				t.Fatalf("events before the result: %+v", got)
			}
		}
		// Without a sink nothing is asked for and nothing breaks.
		if res := call(t, reg, "p_report", `{}`); res.Output != "reported" {
			t.Fatalf("unstreamed: %+v", res)
		}
	})
}

// Cancelling a streaming call cancels it upstream (notifications/cancelled).
func TestStreamingCancelReachesServer(t *testing.T) {
	transports(t, func(t *testing.T, cfg mcp.ServerConfig, _ []string) {
		reg, _ := start(t, "c", cfg)
		ctx, cancel := context.WithCancel(tool.WithEvents(context.Background(), func(tool.Event) {}))
		done := make(chan tool.Result, 1)
		go func() {
			done <- testutil.Direct{Reg: reg}.Execute(ctx, "c_slow", tool.Call{Arguments: json.RawMessage(`{}`)})
		}()
		deadline := time.Now().Add(waitTimeout)
		for call(t, reg, "c_slow_started", `{}`).Output != "1" {
			if time.Now().After(deadline) {
				t.Fatal("the slow call never started")
			}
		}
		cancel()
		if r := <-done; r.Outcome != tool.OutcomeCanceled {
			t.Fatalf("canceled call: %+v", r)
		}
		for call(t, reg, "c_cancelled", `{}`).Output != "1" {
			if time.Now().After(deadline) {
				t.Fatal("the server never saw the cancellation")
			}
		}
	})
}

func TestPrefix(t *testing.T) {
	servers, _, err := mcp.ParseConfig(json.RawMessage(`{"a": {"command": "x", "prefix": ""}, "b": {"command": "x", "prefix": "fs-"}, "c": {"command": "x"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if p := servers["a"].Prefix; p == nil || *p != "" {
		t.Fatalf("a: %v", p)
	}
	if p := servers["b"].Prefix; p == nil || *p != "fs-" {
		t.Fatalf("b: %v", p)
	}
	if servers["c"].Prefix != nil {
		t.Fatal("c: prefix set without the key")
	}
	for raw, want := range map[string]string{
		`{"a": {"command": "x", "prefix": 1}}`:     `a.prefix: must be a string`,
		`{"a": {"command": "x", "prefix": "a b"}}`: `a.prefix: "a b" may only use letters, digits`,
	} {
		if _, _, err := mcp.ParseConfig(json.RawMessage(raw)); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v, want %q", raw, err, want)
		}
	}
	cfg := localConfig()
	empty := ""
	cfg.Prefix = &empty
	reg, _ := start(t, "srv", cfg)
	if res := call(t, reg, "echo", `{"text":"hi"}`); res.Output != "hi" {
		t.Fatalf("upstream name: %+v", res)
	}
	if _, ok := reg.Snapshot().Lookup("weird_name_v2"); !ok {
		t.Fatal("an empty prefix must still sanitize the name")
	}
}
