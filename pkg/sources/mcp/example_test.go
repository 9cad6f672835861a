package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/sources/mcp"
	"github.com/toolnexus/toolnexus/pkg/sources/mcp/internal/testserver"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// An MCP server reached over streamable HTTP, its tools published into a
// registry under the server's name and called like any other tool.
func ExampleNew() {
	// A stand-in for a real remote MCP server.
	srv := testserver.New(testserver.Options{})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv.Server }, nil))
	defer ts.Close()
	defer srv.Stop()

	servers, _, err := mcp.ParseConfig(json.RawMessage(`{
		"demo": {"url": "` + ts.URL + `", "tools": {"echo": true, "fail": true}}
	}`))
	if err != nil {
		panic(err)
	}
	reg := registry.New()
	src := mcp.New("demo", servers["demo"], sources.Env{Logger: slog.New(slog.DiscardHandler)})
	if err := src.Start(context.Background(), reg); err != nil {
		panic(err)
	}
	defer src.Close(context.Background())

	for _, e := range reg.Snapshot().Entries() {
		fmt.Println(e.Tool.Name, "from", e.Tool.Source)
	}
	echo, _ := reg.Snapshot().Lookup("demo_echo")
	res := echo.Tool.Execute(context.Background(), tool.Call{Arguments: json.RawMessage(`{"text":"hello"}`)})
	fmt.Println(res.Output, res.IsError, res.Metadata["server"])
	fail, _ := reg.Snapshot().Lookup("demo_fail")
	res = fail.Tool.Execute(context.Background(), tool.Call{})
	fmt.Printf("%q %v\n", res.Output, res.IsError)
	fmt.Println(src.Status().State)
	// Output:
	// demo_echo from mcp
	// demo_fail from mcp
	// hello false demo
	// "bad\n\nworse" true
	// connected
}
