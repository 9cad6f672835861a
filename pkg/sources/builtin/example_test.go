package builtin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/builtin"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// The builtin source over a workspace: parse the config section, start the
// source into a registry, and call the tools by name.
func Example() {
	dir, _ := os.MkdirTemp("", "workspace")
	defer os.RemoveAll(dir)

	cfg, warnings, err := builtin.ParseConfig(json.RawMessage(`{"tools": {"webfetch": false}}`))
	if err != nil {
		panic(err)
	}
	fmt.Println("warnings:", len(warnings))

	src := builtin.New(cfg, sources.Env{Workspace: dir})
	defer src.Close(context.Background())
	reg := registry.New()
	if err := src.Start(context.Background(), reg); err != nil {
		panic(err)
	}
	fmt.Println("tools:", reg.Snapshot().Len())

	ctx := context.Background()
	call := func(name, args string) tool.Result {
		// Outside a server, run a tool as the registry resolves it; a
		// server runs it through its executor (limits, validation, policy).
		e, _ := reg.Snapshot().Lookup(name)
		return e.Tool.Execute(ctx, tool.Call{Name: name, Arguments: json.RawMessage(args)})
	}
	fmt.Println(call("write", `{"path": "notes/todo.md", "content": "alpha\nbeta\n"}`).Output)
	fmt.Println(call("read", `{"path": "notes/todo.md", "offset": 2, "limit": 1}`).Output)
	fmt.Println(call("grep", `{"pattern": "^b"}`).Output)
	fmt.Println(call("read", `{"path": "../etc/passwd"}`).Output)
	fmt.Println(call("bash", `{"command": "exit 2"}`).Metadata["exitCode"])

	// question suspends; the same call with an answer finishes it.
	const asked = `{"questions": [{"question": "Pick a color?", "options": ["red", "green"]}]}`
	q := call("question", asked)
	fmt.Println(q.Resolved(), q.Pending.Prompt)
	qt, _ := reg.Snapshot().Lookup("question")
	answered := qt.Tool.Execute(ctx, tool.Call{Name: "question", Arguments: json.RawMessage(asked),
		Answer: &tool.Answer{ID: q.Pending.ID, OK: true, Data: map[string]any{"answers": []any{"red"}}}})
	fmt.Println(answered.Output)
	// Output:
	// warnings: 0
	// tools: 9
	// Wrote 11 bytes to notes/todo.md
	// beta
	// notes/todo.md:2:beta
	// read: path escapes the workspace: ../etc/passwd
	// 2
	// pending Pick a color? (options: red, green)
	// {"answers":["red"]}
}
