package codemode

import (
	"context"
	"testing"
)

// TestRunLastExpressionIsTheValue: a script gives its value by `return`
// or as its last expression, whichever it uses; a last statement that is
// not an expression gives none.
func TestRunLastExpressionIsTheValue(t *testing.T) {
	for _, c := range []struct{ name, script, value, printed string }{
		{"expression", `1 + 2`, `3`, ""},
		{"after statements", "const a = tools.one({x: 1})\nconst b = tools.two({prev: a.tool});\nb.args.prev", `"one"`, ""},
		{"parenthesized object", `const n = 2; ({n, ok: true})`, `{"n":2,"ok":true}`, ""},
		{"sequence in parentheses", `let x = 1; ( x++, x * 10 )`, `20`, ""},
		{"after non-ASCII text", `const s = "héllo wörld"; s.length`, `11`, ""},
		{"an earlier return wins", `return "first"; "second"`, `"first"`, ""},
		{"return still works", `const v = 4; return v * v`, `16`, ""},
		{"printing call gives nothing", `console.log("hi")`, "", "hi\n"},
		{"a block is not an expression", `if (true) { 1 }`, "", ""},
		{"a declaration is not an expression", `function f() { return 1 }`, "", ""},
		{"a comment before it", "const v = 3 /* the value: */\n// next\nv", `3`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := Run(context.Background(), c.script, testLimits(), echo)
			if r.Error != "" || string(r.Value) != c.value || r.Printed != c.printed {
				t.Fatalf("value %s printed %q error %q; want %s %q", r.Value, r.Printed, r.Error, c.value, c.printed)
			}
		})
	}
}

func TestWithLastValueLeavesWhatItCannotRewrite(t *testing.T) {
	for _, script := range []string{`return (`, ``, `;`, `var x = 1`} {
		if got := withLastValue(script); got != script {
			t.Fatalf("withLastValue(%q) = %q, want it unchanged", script, got)
		}
	}
}
