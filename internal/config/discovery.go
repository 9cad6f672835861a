package config

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"
)

// checkDiscovery validates server.mcp.discovery and server.mcp.pinned.
func checkDiscovery(m MCPGateway) error {
	switch m.Discovery {
	case "", "list", "search":
	default:
		return keyErr("server.mcp.discovery", "%q is not a discovery mode: use \"list\" (every tool in tools/list, the default) or \"search\" (search_tools and call_tool)", m.Discovery)
	}
	if len(m.Pinned) > 0 && m.Discovery != "search" {
		return keyErr("server.mcp.pinned", "only applies with server.mcp.discovery: \"search\"; set it or remove pinned")
	}
	for j, p := range m.Pinned {
		if _, err := path.Match(strings.TrimPrefix(p, "source:"), ""); err != nil {
			return keyErr(fmt.Sprintf("server.mcp.pinned[%d]", j), "bad glob pattern %q: %v", p, err)
		}
	}
	return nil
}

// parseViews reads server.mcp.views: each name is one path segment of
// /mcp/NAME and a gRPC metadata value, each view lists at least one glob,
// and each glob compiles.
func parseViews(raw map[string]json.RawMessage) (map[string]MCPView, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	views := make(map[string]MCPView, len(raw))
	for name, r := range raw {
		key := "server.mcp.views." + name
		if !viewName(name) {
			return nil, keyErr(key, "%q is not a view name: use letters, digits, '-' and '_' (it is the path /mcp/NAME)", name)
		}
		var v MCPView
		if err := strictDecode(key, r, &v); err != nil {
			return nil, err
		}
		if len(v.Tools) == 0 {
			return nil, keyErr(key+".tools", "is empty: list the globs of the tools this view shows, e.g. [\"read\", \"source:github\"]")
		}
		for j, p := range v.Tools {
			if _, err := path.Match(strings.TrimPrefix(p, "source:"), ""); err != nil {
				return nil, keyErr(fmt.Sprintf("%s.tools[%d]", key, j), "bad glob pattern %q: %v", p, err)
			}
		}
		views[name] = v
	}
	return views, nil
}

func viewName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
