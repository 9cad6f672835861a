package mcpgateway

import (
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolnexus/toolnexus/internal/core"
)

// Named views (server.mcp.views): /mcp/NAME is /mcp narrowed to the view
// NAME, for every request — tools/list, search_tools, describe_tools,
// tools/call, call_tool and run_code's inner calls — because the view
// travels with each call into the core, which checks it. The view is read
// off the request's path, never from the client: the gateway sets
// viewHeader itself and drops any the client sent.

// viewHeader carries a request's view name from ServeHTTP to the SDK
// handlers (which see the request's headers, not its path).
const viewHeader = "Toolnexus-View"

// routeView serves Path and Path/NAME for a view NAME the config has;
// anything else is 404. It returns the request to serve, naming its view.
func (g *Gateway) routeView(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	name, ok := viewPath(r.URL.Path)
	if !ok {
		http.NotFound(w, r)
		return r, false
	}
	if name != "" {
		if _, err := g.core.View(nil, core.ProtocolMCP, name); err != nil {
			http.Error(w, err.Error()+": serve it under server.mcp.views, or use "+Path, http.StatusNotFound)
			return r, false
		}
	}
	if name == "" && r.Header.Get(viewHeader) == "" {
		return r, true
	}
	r = r.Clone(r.Context())
	r.Header.Del(viewHeader)
	if name != "" {
		r.Header.Set(viewHeader, name)
	}
	return r, true
}

// viewPath is the view a path names: "" for Path itself.
func viewPath(p string) (string, bool) {
	if p == Path {
		return "", true
	}
	name, ok := strings.CutPrefix(p, Path+"/")
	return name, ok && name != "" && !strings.Contains(name, "/")
}

// viewOf is the view name of an MCP request ("" for /mcp itself).
func viewOf(extra *mcp.RequestExtra) string {
	if extra == nil || extra.Header == nil {
		return ""
	}
	return extra.Header.Get(viewHeader)
}

// view is the caller's view through the request's door: /mcp's served set
// (server.mcp.tools), narrowed by its token's allowlist and its named view.
// A view gone since the request was routed shows nothing.
func (g *Gateway) view(extra *mcp.RequestExtra) core.View {
	v, _ := g.core.View(callerFrom(extra), core.ProtocolMCP, viewOf(extra))
	return v
}
