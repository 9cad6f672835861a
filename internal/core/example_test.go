package core_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/core"
)

// Every call takes the same steps, in this order (docs/pipeline.md).
func ExampleSteps() {
	fmt.Println(strings.Join(core.Steps(), " → "))
	// Output:
	// observe → view → rate limit → relay → validate → policy → session → limits → run
}

// A caller's view is its token's allowlist, narrowed by what its door
// serves and by the named view it chose; listing, search and every call
// consult it.
func ExampleCore_View() {
	dir, _ := os.MkdirTemp("", "view")
	defer os.RemoveAll(dir)
	cfg, _ := config.Parse([]byte(`{"builtins": false, "debug": true,
		"server": {"mcp": {"tools": ["debug_echo", "debug_fail"], "views": {"echo": {"tools": ["debug_echo"]}}}}}`), "", dir)
	c, err := core.New(cfg, core.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close(context.Background())
	agent := auth.NewPrincipal("agent", []string{"debug_*"}, false)
	for _, door := range []struct{ protocol, view string }{{core.ProtocolGRPC, ""}, {core.ProtocolMCP, ""}, {core.ProtocolMCP, "echo"}} {
		v, _ := c.View(agent, door.protocol, door.view)
		fmt.Printf("%s %q: debug_echo %v, debug_fail %v, debug_sleep %v\n", door.protocol, door.view,
			v.Allows("debug_echo", "debug"), v.Allows("debug_fail", "debug"), v.Allows("debug_sleep", "debug"))
	}
	_, err = c.View(agent, core.ProtocolGRPC, "nope")
	fmt.Println(err)
	// Output:
	// grpc "": debug_echo true, debug_fail true, debug_sleep true
	// mcp "": debug_echo true, debug_fail true, debug_sleep false
	// mcp "echo": debug_echo true, debug_fail false, debug_sleep false
	// no such view "nope": server.mcp.views has echo
}
