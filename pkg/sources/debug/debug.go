// Package debug provides four tools for smoke tests, benchmarks and fault
// drills: debug_echo, debug_sleep, debug_fail and debug_panic. The source is
// off unless the config says "debug": true.
package debug

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// New makes the debug source.
func New() *sources.Static {
	return sources.NewStatic(registry.Layer(sources.KindDebug), Tools(), nil)
}

// Tools returns the four debug tools.
func Tools() []tool.Tool {
	return []tool.Tool{
		tool.Must(tool.New("debug_echo", echo,
			tool.WithSource(sources.KindDebug.Name),
			tool.WithDescription("Return the arguments as compact JSON. For smoke tests and benchmarks."),
			tool.WithInputSchema(json.RawMessage(`{"type":"object"}`)))),
		tool.Must(tool.New("debug_sleep", sleep,
			tool.WithSource(sources.KindDebug.Name),
			tool.WithDescription("Wait ms milliseconds, then return. Stops at once when the call is cancelled."),
			tool.WithInputSchema(json.RawMessage(`{"type":"object","properties":{"ms":{"type":"integer","minimum":0,"description":"How long to wait, in milliseconds"}},"required":["ms"],"additionalProperties":false}`)))),
		tool.Must(tool.New("debug_fail", fail,
			tool.WithSource(sources.KindDebug.Name),
			tool.WithDescription("Fail with the given message."),
			tool.WithInputSchema(json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"The failure output"}},"additionalProperties":false}`)))),
		tool.Must(tool.New("debug_panic", panicky,
			tool.WithSource(sources.KindDebug.Name),
			tool.WithDescription("Panic with the given message, to drill panic containment."),
			tool.WithInputSchema(json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"The panic message"}},"additionalProperties":false}`)))),
	}
}

func echo(_ context.Context, c tool.Call) tool.Result {
	if compact(c.Arguments) && json.Valid(c.Arguments) {
		// Already compact (what agents send): nothing to rewrite.
		return tool.Success(string(c.Arguments), nil)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, c.Arguments); err != nil {
		return tool.FailureWith(tool.OutcomeInvalidArguments, "debug_echo: arguments are not valid JSON: "+err.Error())
	}
	return tool.Success(buf.String(), nil)
}

// compact reports whether b has no whitespace outside its strings, so that
// json.Compact would return it unchanged.
func compact(b []byte) bool {
	inString := false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case inString && c == '\\':
			i++ // the escaped byte, whatever it is
		case c == '"':
			inString = !inString
		case !inString && (c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return false
		}
	}
	return true
}

func sleep(ctx context.Context, c tool.Call) tool.Result {
	var args struct {
		MS *int64 `json:"ms"`
	}
	if err := c.Decode(&args); err != nil || args.MS == nil || *args.MS < 0 {
		return tool.FailureWith(tool.OutcomeInvalidArguments, `debug_sleep: "ms" must be an integer >= 0`)
	}
	timer := time.NewTimer(time.Duration(*args.MS) * time.Millisecond)
	defer timer.Stop()
	select {
	case <-timer.C:
		return tool.Success(fmt.Sprintf("slept %dms", *args.MS), nil)
	case <-ctx.Done():
		return tool.ContextResult(ctx, "debug_sleep")
	}
}

func fail(_ context.Context, c tool.Call) tool.Result {
	var args struct {
		Message string `json:"message"`
	}
	_ = c.Decode(&args)
	return tool.Failure(args.Message, nil)
}

func panicky(_ context.Context, c tool.Call) tool.Result {
	var args struct {
		Message string `json:"message"`
	}
	_ = c.Decode(&args)
	panic(args.Message)
}
