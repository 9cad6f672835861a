package config

import (
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
