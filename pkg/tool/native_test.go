package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

func runNative(t *testing.T, fn tool.NativeFunc, args string) tool.Result {
	t.Helper()
	tl, err := tool.Native("n", fn)
	if err != nil {
		t.Fatalf("Native: %v", err)
	}
	return tl.Execute(context.Background(), tool.Call{Name: "n", Arguments: json.RawMessage(args)})
}

func TestNativeValues(t *testing.T) {
	t.Parallel()
	type point struct {
		X int `json:"x"`
		Y int `json:"y"`
	}
	passThrough := tool.Result{Output: "mine", IsError: true, Outcome: tool.OutcomeDenied, Metadata: map[string]any{"k": "v"}}
	tests := []struct {
		name    string
		value   any
		err     error
		output  string
		isError bool
		outcome tool.Outcome
	}{
		{"string", "hello", nil, "hello", false, tool.OutcomeOK},
		{"empty string", "", nil, "", false, tool.OutcomeOK},
		{"nil", nil, nil, "", false, tool.OutcomeOK},
		{"result", passThrough, nil, "mine", true, tool.OutcomeDenied},
		{"result pointer", &passThrough, nil, "mine", true, tool.OutcomeDenied},
		{"nil result pointer", (*tool.Result)(nil), nil, "", false, tool.OutcomeOK},
		{"struct", point{1, 2}, nil, `{"x":1,"y":2}`, false, tool.OutcomeOK},
		{"map", map[string]any{"b": 2, "a": "x"}, nil, `{"a":"x","b":2}`, false, tool.OutcomeOK},
		{"slice", []int{1, 2}, nil, `[1,2]`, false, tool.OutcomeOK},
		{"number", 3.5, nil, `3.5`, false, tool.OutcomeOK},
		{"bool", true, nil, `true`, false, tool.OutcomeOK},
		{"raw json", json.RawMessage(`{"raw":true}`), nil, `{"raw":true}`, false, tool.OutcomeOK},
		{"error", nil, errors.New("disk full"), "disk full", true, tool.OutcomeToolError},
		{"error wins over value", "ignored", errors.New("nope"), "nope", true, tool.OutcomeToolError},
		{"not JSON-encodable", make(chan int), nil, "tool returned a value that is not JSON-encodable: json: unsupported type: chan int", true, tool.OutcomeToolError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runNative(t, func(context.Context, map[string]any) (any, error) { return tt.value, tt.err }, `{}`)
			if res.Output != tt.output || res.IsError != tt.isError || res.Resolved() != tt.outcome {
				t.Errorf("got %+v (outcome %v), want output %q is_error %v outcome %v",
					res, res.Resolved(), tt.output, tt.isError, tt.outcome)
			}
		})
	}
	res := runNative(t, func(context.Context, map[string]any) (any, error) { return passThrough, nil }, `{}`)
	if res.Metadata["k"] != "v" {
		t.Errorf("a returned Result lost its metadata: %+v", res)
	}
}

func TestNativeArguments(t *testing.T) {
	t.Parallel()
	var got map[string]any
	fn := func(_ context.Context, args map[string]any) (any, error) { got = args; return nil, nil }
	runNative(t, fn, `{"name":"x","n":2,"list":[true]}`)
	if got["name"] != "x" || got["n"] != 2.0 || len(got["list"].([]any)) != 1 {
		t.Errorf("args = %#v", got)
	}
	for _, empty := range []string{``, `null`, `{}`} {
		got = nil
		runNative(t, fn, empty)
		if got == nil || len(got) != 0 {
			t.Errorf("args %q reached the function as %#v, want an empty non-nil map", empty, got)
		}
	}
}

func TestNativeInvalidArguments(t *testing.T) {
	t.Parallel()
	called := false
	fn := func(context.Context, map[string]any) (any, error) { called = true; return nil, nil }
	// The model reads these: JSON terms, never Go type names.
	for _, tt := range []struct{ args, want string }{
		{`[1,2]`, "invalid arguments: expected a JSON object, got array"},
		{`"str"`, "invalid arguments: expected a JSON object, got string"},
		{`5`, "invalid arguments: expected a JSON object, got number"},
		{`{"a":`, "invalid arguments: unexpected end of JSON input"},
	} {
		res := runNative(t, fn, tt.args)
		if res.Output != tt.want || !res.IsError || res.Outcome != tool.OutcomeInvalidArguments {
			t.Errorf("args %s: got %+v, want %q (invalid_arguments)", tt.args, res, tt.want)
		}
	}
	if called {
		t.Error("the function ran on invalid arguments")
	}
}

func TestNativeNilFunc(t *testing.T) {
	t.Parallel()
	if _, err := tool.Native("n", nil); !errors.Is(err, tool.ErrNoFunc) {
		t.Errorf("Native(nil) error = %v, want ErrNoFunc", err)
	}
	if _, err := tool.Native("", func(context.Context, map[string]any) (any, error) { return nil, nil }); !errors.Is(err, tool.ErrNoName) {
		t.Errorf("Native(\"\") error = %v, want ErrNoName", err)
	}
}

func TestNativeOptionsAndContext(t *testing.T) {
	t.Parallel()
	type key struct{}
	tl, err := tool.Native("ctx", func(ctx context.Context, _ map[string]any) (any, error) {
		return ctx.Value(key{}), nil
	}, tool.WithDescription("d"), tool.WithSource("native"))
	if err != nil {
		t.Fatal(err)
	}
	if tl.Description != "d" || tl.Source != "native" || string(tl.InputSchema) != `{"type":"object"}` {
		t.Errorf("tool = %+v", tl)
	}
	res := tl.Execute(context.WithValue(context.Background(), key{}, "from caller"), tool.Call{})
	if res.Output != "from caller" {
		t.Errorf("context value did not reach the function: %+v", res)
	}
}

func TestNativePanic(t *testing.T) {
	t.Parallel()
	res := runNative(t, func(context.Context, map[string]any) (any, error) { panic(errors.New("kaboom")) }, `{}`)
	if res.Output != "kaboom" || res.Outcome != tool.OutcomePanic {
		t.Errorf("got %+v, want the panic as a failure", res)
	}
}
