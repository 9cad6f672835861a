package tool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

func echo(_ context.Context, c tool.Call) tool.Result {
	return tool.Success(string(c.Arguments), nil)
}

func TestNewDefaults(t *testing.T) {
	tl, err := tool.New("greet", echo)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if tl.Name != "greet" {
		t.Errorf("Name = %q, want greet", tl.Name)
	}
	if tl.Description != "" {
		t.Errorf("Description = %q, want empty", tl.Description)
	}
	if got := string(tl.InputSchema); got != `{"type":"object"}` {
		t.Errorf("InputSchema = %s, want {\"type\":\"object\"}", got)
	}
	if tl.Source != "custom" || tool.DefaultSource != "custom" {
		t.Errorf("Source = %q (DefaultSource %q), want custom", tl.Source, tool.DefaultSource)
	}
	if tl.Run == nil {
		t.Error("Run is nil")
	}
}

func TestNewOptions(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}}}`)
	tl, err := tool.New("x", echo,
		tool.WithDescription("does x"),
		tool.WithInputSchema(schema),
		tool.WithSource("mcp"))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if tl.Description != "does x" || string(tl.InputSchema) != string(schema) || tl.Source != "mcp" {
		t.Errorf("got %+v, want the options applied", tl)
	}
}

func TestNewNameUsedAsWritten(t *testing.T) {
	// Only sources that derive names from remote ones sanitize them.
	const name = "weird name/with.dots"
	tl, err := tool.New(name, echo)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if tl.Name != name {
		t.Errorf("Name = %q, want %q", tl.Name, name)
	}
}

func TestNewRequired(t *testing.T) {
	tests := []struct {
		name    string
		tname   string
		fn      tool.Func
		opts    []tool.Option
		wantIs  error
		wantMsg string
	}{
		{name: "no name", tname: "", fn: echo, wantIs: tool.ErrNoName, wantMsg: "tool: name is required"},
		{name: "no func", tname: "t", fn: nil, wantIs: tool.ErrNoFunc, wantMsg: `tool: execute function is required (tool "t")`},
		{name: "bad schema", tname: "t", fn: echo, opts: []tool.Option{tool.WithInputSchema(json.RawMessage(`{"type":`))},
			wantMsg: `tool "t": input schema is not valid JSON`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl, err := tool.New(tt.tname, tt.fn, tt.opts...)
			if err == nil {
				t.Fatalf("New = %+v, want an error", tl)
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("error %v is not %v", err, tt.wantIs)
			}
			if err.Error() != tt.wantMsg {
				t.Errorf("error = %q, want %q", err, tt.wantMsg)
			}
			if tl.Name != "" || tl.Run != nil {
				t.Errorf("on error New returned %+v, want the zero Tool", tl)
			}
		})
	}
}

func TestMust(t *testing.T) {
	tl := tool.Must(tool.New("ok", echo))
	if tl.Name != "ok" {
		t.Errorf("Must returned %q, want ok", tl.Name)
	}
	defer func() {
		v := recover()
		err, ok := v.(error)
		if !ok || !errors.Is(err, tool.ErrNoName) {
			t.Errorf("Must panicked with %v, want ErrNoName", v)
		}
	}()
	tool.Must(tool.New("", echo))
	t.Error("Must did not panic on an error")
}

func TestNormalizeFillsDefaultsOnly(t *testing.T) {
	tl := tool.Tool{Name: "n", Run: echo, Source: "http", InputSchema: json.RawMessage(`{"type":"object","required":["a"]}`)}
	if err := tl.Normalize(); err != nil {
		t.Fatalf("Normalize: %v", err)
	}
	if tl.Source != "http" || string(tl.InputSchema) != `{"type":"object","required":["a"]}` {
		t.Errorf("Normalize changed set fields: %+v", tl)
	}
}

func TestExecuteEmptyArgumentsBecomeObject(t *testing.T) {
	tl := tool.Must(tool.New("e", echo))
	for _, args := range []json.RawMessage{nil, {}} {
		res := tl.Execute(context.Background(), tool.Call{Name: "e", Arguments: args})
		if res.Output != "{}" || res.IsError {
			t.Errorf("args %q: got %+v, want output {}", args, res)
		}
	}
	res := tl.Execute(context.Background(), tool.Call{Name: "e", Arguments: json.RawMessage(`{"n":1.50}`)})
	if res.Output != `{"n":1.50}` {
		t.Errorf("arguments were not passed verbatim: %q", res.Output)
	}
}

func TestCallDecode(t *testing.T) {
	var v map[string]any
	if err := (tool.Call{}).Decode(&v); err != nil || v == nil || len(v) != 0 {
		t.Errorf("empty Call decoded to %v, %v; want an empty map", v, err)
	}
	var w struct{ A int }
	if err := (tool.Call{Arguments: json.RawMessage(`{"A":3}`)}).Decode(&w); err != nil || w.A != 3 {
		t.Errorf("Decode = %+v, %v; want A=3", w, err)
	}
}

type stringer struct{}

func (stringer) String() string { return "stringer says no" }

func TestExecutePanic(t *testing.T) {
	tests := []struct {
		name  string
		value any
		want  string
	}{
		{"error", errors.New("kaboom"), "kaboom"},
		{"string", "kaboom", "kaboom"},
		{"wrapped error", fmt.Errorf("outer: %w", errors.New("kaboom")), "outer: kaboom"},
		{"int", 42, "42"},
		{"stringer", stringer{}, "stringer says no"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl := tool.Must(tool.New("boom", func(context.Context, tool.Call) tool.Result { panic(tt.value) }))
			res := tl.Execute(context.Background(), tool.Call{Name: "boom"})
			if !res.IsError || res.Output != tt.want || res.Outcome != tool.OutcomePanic {
				t.Errorf("got %+v, want is_error output %q outcome panic", res, tt.want)
			}
		})
	}
}

func TestExecuteNilPanic(t *testing.T) {
	// panic(nil) is still a panic (runtime.PanicNilError since Go 1.21).
	tl := tool.Must(tool.New("nil", func(context.Context, tool.Call) tool.Result { panic(nil) }))
	res := tl.Execute(context.Background(), tool.Call{})
	if !res.IsError || res.Outcome != tool.OutcomePanic || !strings.Contains(res.Output, "nil") {
		t.Errorf("got %+v, want a panic failure mentioning nil", res)
	}
}

func TestExecuteRuntimePanic(t *testing.T) {
	tl := tool.Must(tool.New("idx", func(_ context.Context, c tool.Call) tool.Result {
		var s []int
		return tool.Success(fmt.Sprint(s[len(c.Arguments)]), nil)
	}))
	res := tl.Execute(context.Background(), tool.Call{})
	if !res.IsError || res.Outcome != tool.OutcomePanic || !strings.Contains(res.Output, "index out of range") {
		t.Errorf("got %+v, want the runtime error's text", res)
	}
}

// The stack goes to the log for the operator, never to the model.
func TestPanicStackGoesToLogOnly(t *testing.T) {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })

	tl := tool.Must(tool.New("boom", func(context.Context, tool.Call) tool.Result { panic("kaboom") }))
	res := tl.Execute(context.Background(), tool.Call{})
	if res.Output != "kaboom" {
		t.Errorf("Output = %q, want kaboom without a stack", res.Output)
	}
	log := buf.String()
	for _, want := range []string{"tool panicked", "tool=boom", "panic=kaboom", "goroutine", "tool_test.go"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
}

func TestExecuteSeesContext(t *testing.T) {
	type key struct{}
	tl := tool.Must(tool.New("ctx", func(ctx context.Context, _ tool.Call) tool.Result {
		<-ctx.Done()
		return tool.ContextResult(ctx, "ctx")
	}))
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
	done := make(chan tool.Result)
	go func() { done <- tl.Execute(ctx, tool.Call{}) }()
	cancel()
	res := <-done
	if res.Output != "ctx: canceled" || res.Outcome != tool.OutcomeCanceled {
		t.Errorf("got %+v, want ctx: canceled", res)
	}
}
