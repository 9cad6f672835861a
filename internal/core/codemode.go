package core

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/toolnexus/toolnexus/internal/codemode"
	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// DescribeToolsName is code mode's companion tool: declarations of named tools.
const DescribeToolsName = "describe_tools"

// codeModeSource is the source label of code mode's own tools.
const codeModeSource = "codemode"

// isCodeModeTool reports whether name is one of code mode's own tools,
// which a script may neither call nor describe.
func (c *Core) isCodeModeTool(name string) bool {
	return c.codeMode && (name == codemode.ToolName || name == DescribeToolsName)
}

// codeModeTools are run_code and describe_tools, served as native tools so
// that they are listed, searched, allowed, policed and audited like any.
// They act as their caller, so the pipeline's run step runs them with the
// call itself (runCodeMode); the registered functions only refuse a run
// that did not come through it.
func (c *Core) codeModeTools() []tool.Tool {
	run := tool.Must(tool.Typed(codemode.ToolName, notThroughCore[runCodeArgs](codemode.ToolName), tool.WithDescription(
		"Run a short JavaScript program that calls tools as functions: `const r = tools.some_tool({arg: 1})` returns the tool's "+
			"structured result (an object) or its text; a failing tool throws an Error you may catch. `return` the result or "+
			"print it with console.log. No require, files or network: only tools. Get the tools' declarations first with "+
			DescribeToolsName+" (the names from search). Every call is checked as if made directly; limits on calls, time, "+
			"memory and output apply."), tool.WithSource(codeModeSource)))
	describe := tool.Must(tool.Typed(DescribeToolsName, notThroughCore[describeArgs](DescribeToolsName), tool.WithDescription(
		"TypeScript-like declarations of the named tools, for calling them from "+codemode.ToolName+"."), tool.WithSource(codeModeSource)))
	return []tool.Tool{run, describe}
}

func notThroughCore[T any](name string) func(context.Context, T) (any, error) {
	return func(context.Context, T) (any, error) {
		return nil, fmt.Errorf("%s is served only through the server's call path", name)
	}
}

// runCodeMode is the run step of a code-mode tool. The outer call is the
// call as the steps before handed it on — its caller, session, door and
// view, and the answer the policy step left it (none once it redeemed an
// approval of run_code itself).
func (c *Core) runCodeMode(ctx context.Context, f flow) tool.Result {
	call, outer := tool.Call{Name: f.Name, Arguments: f.args}, f.Call
	if f.Name == DescribeToolsName {
		return tool.RunTyped(ctx, call, func(ctx context.Context, a describeArgs) (any, error) { return c.describeTools(ctx, outer, a) })
	}
	return tool.RunTyped(ctx, call, func(ctx context.Context, a runCodeArgs) (any, error) { return c.runCode(ctx, outer, a) })
}

type runCodeArgs struct {
	// Code is the program: a function body; `return` its result.
	Code string `json:"code" jsonschema:"description=JavaScript function body; return the result"`
}

type describeArgs struct {
	Names []string `json:"names" jsonschema:"description=tool names, as found by search"`
}

func (c *Core) runCode(ctx context.Context, outer Call, args runCodeArgs) (any, error) {
	if strings.TrimSpace(args.Code) == "" {
		return tool.FailureWith(tool.OutcomeInvalidArguments, "code is empty: pass a JavaScript function body that returns its result"), nil
	}
	rp, refused := c.resumeRun(ctx, outer)
	if refused != nil {
		return *refused, nil
	}
	r := c.interpreters.Run(ctx, principalName(outer), args.Code, c.codeModeLimits(), rp.call)
	meta := map[string]any{"tool_calls": r.Calls}
	if rp.pending != nil {
		return c.suspendRun(ctx, rp, meta), nil
	}
	if r.Error != "" {
		out := r.Error
		if r.Printed != "" {
			out += "\nprinted before it stopped:\n" + r.Printed
		}
		return tool.Failure(out, meta), nil
	}
	out := r.Printed
	if r.Value != nil {
		out += string(r.Value)
	}
	return tool.Success(out, meta), nil
}

// codeModeLimits are a run's limits as the config sets them now: the
// bounds of one run, the interpreter caps, and the sandbox it runs in.
func (c *Core) codeModeLimits() codemode.Limits {
	cfg := c.cfg.Load()
	cm := cfg.CodeMode
	return codemode.Limits{MaxCalls: cm.MaxCalls, Timeout: cm.Timeout, MemoryBytes: uint64(cm.MemoryMB) << 20, MaxOutput: cm.MaxOutputBytes,
		MaxConcurrent: cm.MaxConcurrency, MaxPerPrincipal: cm.MaxConcurrencyPerPrincipal, Sandbox: c.eng.InterpreterSandbox(cfg)}
}

// innerCallWith runs one of a script's calls as the outer caller, through
// Execute: the same view (its door's and its token's), policy, limits,
// audit and (as a child of run_code's) span as a direct call.
func (c *Core) innerCallWith(ctx context.Context, outer Call, name string, args json.RawMessage, answer *tool.Answer) (codemode.InnerResult, tool.Result) {
	if c.isCodeModeTool(name) {
		return codemode.InnerResult{Output: "a script cannot call " + name, IsError: true}, tool.Result{}
	}
	res, _ := c.Execute(ctx, Call{Name: name, Arguments: args, Answer: answer, Protocol: outer.Protocol, View: outer.View, Caller: outer.Caller, Session: outer.Session})
	return codemode.InnerResult{Output: res.Output, IsError: res.IsError, Structured: res.StructuredContent}, res
}

func (c *Core) describeTools(_ context.Context, outer Call, args describeArgs) (any, error) {
	if len(args.Names) == 0 || len(args.Names) > 50 {
		return tool.FailureWith(tool.OutcomeInvalidArguments, "names: give 1 to 50 tool names (from search)"), nil
	}
	snap, view := c.exec.Snapshot(), c.viewOf(outer)
	var b strings.Builder
	for _, n := range args.Names {
		e, known := snap.Lookup(n)
		if !known || !view.Sees(e) || c.isCodeModeTool(n) {
			// Hidden and missing read the same: describing is no oracle.
			fmt.Fprintf(&b, "// %s: no such tool\n\n", n)
			continue
		}
		b.WriteString(codemode.Declare(e.Tool.Name, e.Tool.Description, e.Tool.InputSchema) + "\n\n")
	}
	return strings.TrimSpace(b.String()), nil
}

// checkCodeMode refuses a reload that turns code mode on or off: its tools
// are registered at start.
func checkCodeMode(old, next *config.Config) error {
	if old.CodeMode.Enabled != next.CodeMode.Enabled {
		return &config.Error{Key: "codeMode.enabled", Msg: "turning code mode on or off needs a restart"}
	}
	return nil
}
