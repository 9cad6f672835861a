package registry_test

import (
	"context"
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

// The registry resolves names; it runs nothing. Calls go through the
// server (gRPC Execute, the MCP gateway), which applies limits, argument
// validation, allowlists and metrics to every call.
func ExampleSnapshot_Lookup() {
	r := registry.New()
	add := tool.Must(tool.Native("add", func(_ context.Context, args map[string]any) (any, error) {
		a, _ := args["a"].(float64)
		b, _ := args["b"].(float64)
		return a + b, nil
	}))
	_ = r.Replace(registry.Layer(kindNative), []tool.Tool{add})

	s := r.Snapshot()
	for _, name := range []string{"add", "nope"} {
		e, ok := s.Lookup(name)
		if !ok {
			fmt.Printf("%s: %q\n", name, registry.UnknownTool(name).Output)
			continue
		}
		fmt.Printf("%s: from %s\n", name, e.Layer)
	}
	// Output:
	// add: from native/native
	// nope: "unknown tool: nope"
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
