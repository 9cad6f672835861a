package tool_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// FuzzTypedArguments feeds arbitrary text as arguments to a Typed tool: the
// outcome is always ok or invalid_arguments (never a panic), a failure always
// says "invalid arguments: ", and whatever decodes is also accepted by
// encoding/json with the same type.
func FuzzTypedArguments(f *testing.F) {
	for _, s := range []string{`{"name":"a","times":2,"inner":{"loud":true}}`, `{}`, `[]`, `null`,
		`{"name":5}`, `{"extra":1}`, `{"name":"a"} x`, `{"inner":{"loud":"x"}}`, ``, `"\u00e9"`} {
		f.Add(s)
	}
	tl := tool.Must(tool.Typed("fz", func(_ context.Context, a greetArgs) (any, error) { return a, nil }))
	f.Fuzz(func(t *testing.T, args string) {
		res := tl.Execute(context.Background(), tool.Call{Arguments: json.RawMessage(args)})
		switch res.Resolved() {
		case tool.OutcomeOK:
			if strings.TrimSpace(args) != "" {
				var v greetArgs
				if err := json.Unmarshal([]byte(args), &v); err != nil {
					t.Fatalf("Typed accepted %q, encoding/json rejects it: %v", args, err)
				}
			}
		case tool.OutcomeInvalidArguments:
			if !strings.HasPrefix(res.Output, "invalid arguments: ") {
				t.Fatalf("failure %q for %q", res.Output, args)
			}
		default:
			t.Fatalf("args %q: outcome %v: %+v", args, res.Resolved(), res)
		}
	})
}
