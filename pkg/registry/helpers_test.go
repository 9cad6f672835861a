package registry_test

import (
	"context"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// answer is a tool whose output is fixed, so a call shows which version of a
// name the registry resolved.
func answer(name, output string) tool.Tool {
	return tool.Tool{Name: name, Description: output, Run: func(context.Context, tool.Call) tool.Result {
		return tool.Success(output, nil)
	}}
}

func answers(output string, names ...string) []tool.Tool {
	out := make([]tool.Tool, len(names))
	for i, n := range names {
		out[i] = answer(n, output)
	}
	return out
}

func mustReplace(t testing.TB, r *registry.Registry, id registry.LayerID, tools []tool.Tool) {
	t.Helper()
	if err := r.Replace(id, tools); err != nil {
		t.Fatalf("Replace(%s): %v", id, err)
	}
}

func names(s *registry.Snapshot) []string {
	out := make([]string, 0, s.Len())
	for _, e := range s.Entries() {
		out = append(out, e.Tool.Name)
	}
	return out
}

// call runs name as resolved by the current snapshot, the way the executor
// resolves it; the registry itself runs nothing.
func call(r *registry.Registry, name string) tool.Result {
	return runIn(context.Background(), r, name)
}

func runIn(ctx context.Context, r *registry.Registry, name string) tool.Result {
	e, ok := r.Snapshot().Lookup(name)
	if !ok {
		return registry.UnknownTool(name)
	}
	return e.Tool.Run(ctx, tool.Call{Name: name, Arguments: []byte("{}")})
}

// Test kinds, in the precedence order the project's sources use; the
// registry itself knows none of them.
var (
	kindDebug   = registry.Kind{Name: "debug", Precedence: 10}
	kindBuiltin = registry.Kind{Name: "builtin", Precedence: 20}
	kindSkill   = registry.Kind{Name: "skill", Precedence: 30}
	kindA2A     = registry.Kind{Name: "a2a", Precedence: 40}
	kindHTTP    = registry.Kind{Name: "http", Precedence: 50}
	kindNative  = registry.Kind{Name: "native", Precedence: 60}
	kindMCP     = registry.Kind{Name: "mcp", Precedence: 70}
)

var testKinds = []registry.Kind{kindDebug, kindBuiltin, kindSkill, kindA2A, kindHTTP, kindNative, kindMCP}
