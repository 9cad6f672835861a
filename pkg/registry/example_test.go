package registry_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

func fixed(name, output string) tool.Tool {
	return tool.Must(tool.New(name, func(context.Context, tool.Call) tool.Result {
		return tool.Success(output, nil)
	}))
}

func ExampleRegistry_Replace() {
	r := registry.New()
	// Each source owns one layer and replaces it whole.
	_ = r.Replace(registry.Layer(kindBuiltin), []tool.Tool{fixed("read", "builtin read"), fixed("bash", "builtin bash")})
	_ = r.Replace(registry.LayerID{Kind: kindMCP, Name: "fs"}, []tool.Tool{fixed("read", "mcp read")})

	s := r.Snapshot()
	for _, e := range s.Entries() {
		fmt.Println(e.Tool.Name, "from", e.Layer)
	}
	for _, sh := range s.Shadowed() {
		fmt.Println(sh.Name, "in", sh.Hidden, "is shadowed by", sh.WinnerIn)
	}
	fmt.Println("revision", s.Revision())

	// A repeated name within one layer is refused, and nothing changes.
	err := r.Replace(registry.Layer(kindNative), []tool.Tool{fixed("x", ""), fixed("x", "")})
	fmt.Println(err, "- revision", r.Snapshot().Revision())
	// Output:
	// bash from builtin/builtin
	// read from mcp/fs
	// read in builtin/builtin is shadowed by mcp/fs
	// revision 2
	// layer native/native: tool name "x" appears twice - revision 2
}

func ExampleRegistry_Execute() {
	r := registry.New()
	add := tool.Must(tool.Native("add", func(_ context.Context, args map[string]any) (any, error) {
		a, _ := args["a"].(float64)
		b, _ := args["b"].(float64)
		return a + b, nil
	}))
	boom := tool.Must(tool.New("boom", func(context.Context, tool.Call) tool.Result {
		panic(errors.New("kaboom"))
	}))
	_ = r.Replace(registry.Layer(kindNative), []tool.Tool{add, boom})

	ctx := context.Background()
	for _, name := range []string{"add", "boom", "nope"} {
		res := r.Execute(ctx, name, tool.Call{Arguments: json.RawMessage(`{"a":1,"b":2}`)})
		fmt.Printf("%s: %q is_error=%v outcome=%v\n", name, res.Output, res.IsError, res.Resolved())
	}
	// Output:
	// add: "3" is_error=false outcome=ok
	// boom: "kaboom" is_error=true outcome=panic
	// nope: "unknown tool: nope" is_error=true outcome=unknown_tool
}

func ExampleRegistry_Watch() {
	r := registry.New()
	id := registry.LayerID{Kind: kindMCP, Name: "fs"}
	_ = r.Replace(id, []tool.Tool{fixed("read", "")})

	w, current := r.Watch()
	defer w.Close()
	fmt.Println("start at revision", current.Revision(), "with", current.Len(), "tool")

	_ = r.Replace(id, []tool.Tool{fixed("read", ""), fixed("write", "")})
	r.Remove(id)

	for range 2 {
		c := <-w.C()
		added, removed, changed := registry.Diff(c.Prev, c.Next)
		fmt.Println("revision", c.Next.Revision(), "added", added, "removed", removed, "changed", changed)
	}
	// Output:
	// start at revision 1 with 1 tool
	// revision 2 added [write] removed [] changed []
	// revision 3 added [] removed [read write] changed []
}
