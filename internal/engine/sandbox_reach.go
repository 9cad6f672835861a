package engine

import (
	"path/filepath"
	"sort"
	"strings"

	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/sandbox"
	"github.com/toolnexus/toolnexus/pkg/sources/mcp"
)

// ReachWarnings lists, one line each naming the config key, the directory
// in the way and the fix, the directories of cfg that box's commands
// cannot use: the workspace, the sessions' root, sandbox.readPaths and a
// sandboxed MCP server's program, cwd, readPaths and writePaths. Only a
// root server whose commands act as an unprivileged uid, with a directory
// above one of these that uid may not search, and no mount namespace to
// give the commands a view of it, has any (sandbox.Unreachable). The
// server logs them at start and --check prints them, so the problem shows
// before the first call instead of at each.
func ReachWarnings(box *sandbox.Sandbox, cfg *config.Config) []string {
	var out []string
	check := func(key, dir string) {
		if err := box.Unreachable(dir); err != nil {
			out = append(out, "sandbox: "+key+": "+err.Error())
		}
	}
	if ws, err := cfg.WorkspaceDir(); err == nil {
		check("builtins.workspace", ws)
	}
	if root, err := cfg.SessionsRoot(); err == nil {
		check("sessions.root", root)
	}
	for _, p := range cfg.Sandbox.ReadPaths {
		check("sandbox.readPaths", p)
	}
	names := make([]string, 0, len(cfg.MCP))
	for name := range cfg.MCP {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		sc := cfg.MCP[name]
		if sc.Type != mcp.TypeLocal || sc.Sandbox == nil {
			continue
		}
		key := "mcpServers." + name
		if len(sc.Command) > 0 && strings.Contains(sc.Command[0], "/") {
			check(key+".command", filepath.Dir(cfg.Resolve(sc.Command[0])))
		}
		if sc.Cwd != "" {
			check(key+".cwd", cfg.Resolve(sc.Cwd))
		}
		for _, p := range sc.Sandbox.ReadPaths {
			check(key+".sandbox.readPaths", cfg.Resolve(p))
		}
		for _, p := range sc.Sandbox.WritePaths {
			check(key+".sandbox.writePaths", cfg.Resolve(p))
		}
	}
	return out
}
