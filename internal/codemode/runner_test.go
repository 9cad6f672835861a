package codemode

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/sandbox"
)

// testLimits are the limits of a run in the tests' sandbox, as the
// server runs it.
func testLimits() Limits {
	return Limits{MaxCalls: 100, Timeout: 2 * time.Second, MemoryBytes: 512 << 20, MaxOutput: 64 << 10, Sandbox: &sandbox.Runner{Box: box}}
}

// memoryLimitTimeout is the time a script that runs into the memory limit
// gets: enough for the limit, not the clock, to stop it.
const memoryLimitTimeout = 30 * time.Second

// echo answers every inner call with its name and arguments.
func echo(_ context.Context, name string, args json.RawMessage) InnerResult {
	if name == "fail" {
		return InnerResult{Output: "it failed", IsError: true}
	}
	var m map[string]any
	json.Unmarshal(args, &m)
	return InnerResult{Output: name, Structured: map[string]any{"tool": name, "args": m}}
}

func TestRun(t *testing.T) {
	cases := []struct {
		name, script, value, printed, err string
	}{
		{"return value", `return 1+2`, `3`, "", ""},
		{"chained calls", `const a = tools.one({x: 1}); const b = tools.two({prev: a.tool}); return b.args.prev`, `"one"`, "", ""},
		{"print", `console.log("hi", {a: 1}); print(2)`, "", "hi {\"a\":1}\n2\n", ""},
		{"inner error is catchable", `try { tools.fail({}) } catch (e) { return "caught: " + e.message }`, `"caught: fail: it failed"`, "", ""},
		{"inner error uncaught", `tools.fail({})`, "", "", "fail: it failed"},
		{"syntax error", `return (`, "", "", "the script failed"},
		{"no require", `return typeof require + typeof fetch + typeof process`, `"undefinedundefinedundefined"`, "", ""},
		{"infinite loop", `for (;;) {}`, "", "", "time limit"},
		// Doubling copies ~1 GiB before the limit: seconds on a loaded
		// machine, so this case alone gets the time (memoryLimitTimeout).
		{"4 GiB by string doubling", `let s = "x"; for (let i = 0; i < 32; i++) s = s + s; return s.length`, "", "", "memory"},
		{"10,000 calls", `for (let i = 0; i < 10000; i++) tools.one({i}); return "done"`, "", "", "more than 100 tool calls"},
		{"cap survives catch", `for (let i = 0; i < 10000; i++) { try { tools.one({i}) } catch (e) {} } return "escaped"`, "", "", "more than 100 tool calls"},
		{"output cap", `return "x".repeat(1<<20)`, "", "", "output limit"},
		{"printed cap", `const s = "x".repeat(1<<20); for (let i = 0; i < 10; i++) console.log(s)`, "", "", "output limit"},
	}
	t.Run("4 GiB array", func(t *testing.T) {
		// goja fills an array slowly: the time limit or the memory
		// limit stops it, whichever comes first on this machine.
		r := Run(context.Background(), `const a = new Array(1<<29).fill(1); return a.length`, testLimits(), echo)
		if !strings.Contains(r.Error, "memory") && !strings.Contains(r.Error, "time limit") {
			t.Fatalf("error %q, want the memory or time limit", r.Error)
		}
	})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lim := testLimits()
			if c.err == "memory" {
				lim.Timeout = memoryLimitTimeout
			}
			r := Run(context.Background(), c.script, lim, echo)
			if c.err != "" {
				if !strings.Contains(r.Error, c.err) {
					t.Fatalf("error %q, want it to contain %q (value %s)", r.Error, c.err, r.Value)
				}
				return
			}
			if r.Error != "" {
				t.Fatalf("unexpected error %q", r.Error)
			}
			if string(r.Value) != c.value || r.Printed != c.printed {
				t.Fatalf("value %s printed %q, want %s %q", r.Value, r.Printed, c.value, c.printed)
			}
		})
	}
}
