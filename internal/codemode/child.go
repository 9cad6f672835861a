package codemode

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"
)

// childEnv marks a process as a code-mode child.
const childEnv = "TOOLNEXUS_CODEMODE_CHILD"

// readyLine is the child's first line: it is up, and waits for the
// script. The server limits its address space before it answers.
var readyLine = []byte("{\"ready\":true}\n")

var entered atomic.Bool

// EnterChild turns this process into a code-mode child when the server
// started it as one, and then never returns; otherwise it returns at once.
// Like the sandbox helper's entry it is an explicit call first in main.
func EnterChild() {
	entered.Store(true)
	if os.Getenv(childEnv) == "" {
		return
	}
	os.Exit(childMain())
}

func childMain() int {
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	out.Write(readyLine)
	if out.Flush() != nil {
		return 3
	}
	var s start
	line, err := in.ReadBytes('\n')
	if err != nil || json.Unmarshal(line, &s) != nil {
		return 3
	}
	d := runScript(s, in, out)
	b, _ := json.Marshal(fromChild{Done: &d})
	out.Write(append(b, '\n'))
	out.Flush()
	return 0
}

// fatalError stops the script through every catch: the server ended it.
type fatalError struct{ msg string }

func (f fatalError) Error() string { return f.msg }

func runScript(s start, in *bufio.Reader, out *bufio.Writer) (d done) {
	vm := goja.New()
	vm.SetFieldNameMapper(goja.TagFieldNameMapper("json", true))
	var printed strings.Builder
	print := func(call goja.FunctionCall) goja.Value {
		parts := make([]string, len(call.Arguments))
		for i, a := range call.Arguments {
			parts[i] = display(vm, a)
		}
		// Past the cap one byte more is kept: enough for the server to
		// refuse the run, never a copy of a huge string.
		line := strings.Join(parts, " ") + "\n"
		if room := s.MaxOutput + 1 - printed.Len(); room > 0 {
			printed.WriteString(line[:min(room, len(line))])
		}
		return goja.Undefined()
	}
	console := vm.NewObject()
	console.Set("log", print)
	vm.Set("console", console)
	vm.Set("print", print)
	vm.Set("tools", vm.NewDynamicObject(&toolsObject{vm: vm, in: in, out: out}))
	if s.WallMS > 0 {
		t := time.AfterFunc(time.Duration(s.WallMS)*time.Millisecond, func() {
			vm.Interrupt(fmt.Sprintf("run_code: the script ran past its time limit (%d ms)", s.WallMS))
		})
		defer t.Stop()
	}
	defer func() {
		if r := recover(); r != nil {
			if f, ok := r.(fatalError); ok {
				d = done{Error: f.msg, Printed: printed.String()}
				return
			}
			panic(r)
		}
	}()
	v, err := vm.RunString("(function(){\n" + withLastValue(s.Script) + "\n})()")
	d.Printed = printed.String()
	if err != nil {
		var ie *goja.InterruptedError
		if errors.As(err, &ie) {
			d.Error = fmt.Sprint(ie.Value())
		} else {
			d.Error = "run_code: the script failed: " + err.Error()
		}
		return d
	}
	if v != nil && !goja.IsUndefined(v) {
		b, err := json.Marshal(v.Export())
		if err != nil {
			d.Error = "run_code: the script's return value is not JSON: " + err.Error()
			return d
		}
		d.Value = b
	}
	return d
}

// display is how print shows a value: strings as they are, the rest as JSON.
func display(vm *goja.Runtime, v goja.Value) string {
	if s, ok := v.Export().(string); ok {
		return s
	}
	b, err := json.Marshal(v.Export())
	if err != nil {
		return v.String()
	}
	return string(b)
}

// toolsObject is the script's `tools`: every property is a function that
// calls the tool of that name through the server.
type toolsObject struct {
	vm  *goja.Runtime
	in  *bufio.Reader
	out *bufio.Writer
}

func (t *toolsObject) Get(name string) goja.Value {
	return t.vm.ToValue(func(call goja.FunctionCall) goja.Value {
		args := []byte("{}")
		if a := call.Argument(0); !goja.IsUndefined(a) && !goja.IsNull(a) {
			b, err := json.Marshal(a.Export())
			if err != nil {
				panic(t.vm.NewTypeError("tools.%s: the arguments are not JSON: %v", name, err))
			}
			args = b
		}
		r := t.call(name, args)
		if r.Fatal != "" {
			panic(fatalError{r.Fatal})
		}
		if r.IsError {
			panic(t.vm.NewGoError(errors.New(name + ": " + r.Output)))
		}
		if r.Structured != nil {
			return t.vm.ToValue(r.Structured)
		}
		// Most tools answer JSON as text: the script gets the value.
		if o := strings.TrimSpace(r.Output); strings.HasPrefix(o, "{") || strings.HasPrefix(o, "[") {
			var v any
			if json.Unmarshal([]byte(o), &v) == nil {
				return t.vm.ToValue(v)
			}
		}
		return t.vm.ToValue(r.Output)
	})
}

func (t *toolsObject) call(name string, args []byte) InnerResult {
	b, _ := json.Marshal(fromChild{Call: &innerCall{Name: name, Arguments: args}})
	t.out.Write(append(b, '\n'))
	if t.out.Flush() != nil {
		return InnerResult{Fatal: "run_code: the server went away"}
	}
	line, err := t.in.ReadBytes('\n')
	var r InnerResult
	if err != nil || json.Unmarshal(line, &r) != nil {
		return InnerResult{Fatal: "run_code: the server went away"}
	}
	return r
}

func (t *toolsObject) Set(string, goja.Value) bool { return false }
func (t *toolsObject) Has(string) bool             { return true }
func (t *toolsObject) Delete(string) bool          { return false }
func (t *toolsObject) Keys() []string              { return nil }
