package codemode

import (
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
)

// The script is the body of a function, so it gives its result by
// `return`; a script whose last statement is an expression (`1 + 2`,
// `tools.x({}).items`) gives that expression's value too, as the contract
// says and as a REPL would. withLastValue makes the second the first: it
// puts `return` before a last statement that is an expression. Anything
// it cannot rewrite safely runs as written (a syntax error is then
// reported by the run, as before).

// funcHead is what parser.ParseFunction puts before the body.
const funcHead = "(function() {\n"

// withLastValue is script with `return ` before its last statement when
// that statement is an expression.
func withLastValue(script string) string {
	fn, err := parser.ParseFunction("", script)
	if err != nil || fn.Body == nil || len(fn.Body.List) == 0 {
		return script
	}
	last, ok := fn.Body.List[len(fn.Body.List)-1].(*ast.ExpressionStatement)
	if !ok {
		return script
	}
	at := int(last.Idx0()) - 1 - len(funcHead) // Idx counts from 1
	// The parser keeps no node for parentheses: a last statement written
	// `(a, b)` starts at its first "(", before the expression's Idx0.
	for at > 0 && (script[at-1] == '(' || script[at-1] == ' ' || script[at-1] == '\t') {
		at--
	}
	if at < 0 || at > len(script) {
		return script
	}
	out := script[:at] + "return " + script[at:]
	if _, err := parser.ParseFunction("", out); err != nil {
		return script
	}
	return out
}
