package debug_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/sources/debug"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

func echoTool(t testing.TB) tool.Tool {
	for _, tl := range debug.Tools() {
		if tl.Name == "debug_echo" {
			return tl
		}
	}
	t.Fatal("no debug_echo")
	return tool.Tool{}
}

// debug_echo answers exactly what json.Compact makes of its arguments,
// whether they arrive compact (returned as they are) or not.
func FuzzEchoIsCompact(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"a":1}`, `{ "a" : 1 }`, `{"message":"hello, toolnexus","n":42,"tags":["a","b","c"]}`,
		`{"q":"a \" b"}`, `{"q":"a \\"}`, `{"q":"\\\" x"}`, "{\"a\":\n[1,\t2]}", `{"a":`, `{"a":"x} `, `nope`,
	} {
		f.Add(s)
	}
	echo := echoTool(f)
	f.Fuzz(func(t *testing.T, args string) {
		res := echo.Run(context.Background(), tool.Call{Name: "debug_echo", Arguments: json.RawMessage(args)})
		var want bytes.Buffer
		if err := json.Compact(&want, []byte(args)); err != nil {
			if !res.IsError {
				t.Fatalf("%q is not JSON, yet echoed %q", args, res.Output)
			}
			return
		}
		if res.IsError || res.Output != want.String() {
			t.Fatalf("echo(%q) = %q (is_error %v), want %q", args, res.Output, res.IsError, want.String())
		}
	})
}
