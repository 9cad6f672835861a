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

func call(r *registry.Registry, name string) tool.Result {
	return r.Execute(context.Background(), name, tool.Call{})
}
