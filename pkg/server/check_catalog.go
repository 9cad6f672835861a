package server

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/toolnexus/toolnexus/internal/catalog"
	"github.com/toolnexus/toolnexus/internal/config"
)

// checkPinStore is what a start refuses about the pins (pinning.dir): a
// directory inside what the model's file tools reach, one that cannot be
// created or written, a pins.json that does not parse. Refused before
// anything starts, by New and by --check alike.
func checkPinStore(cfg *config.Config) error {
	dir, err := cfg.PinningDir()
	if err != nil || dir == "" {
		return err
	}
	if err := catalog.CheckDir(dir); err != nil {
		return &config.Error{Key: "pinning.dir", Msg: "the pins cannot be kept there: " + err.Error()}
	}
	return nil
}

// catalogFindings are --check's warnings about the catalog: an override
// naming a tool no configured source offers (a typo: it never applies),
// and hold mode with no one able to approve.
func catalogFindings(cfg *config.Config) []string {
	var out []string
	static := staticToolNames(cfg)
	prefixes := dynamicPrefixes(cfg)
	for _, name := range sortedNames(cfg.ToolOverrides) {
		if static[name] || slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(name, p) }) {
			continue
		}
		msg := fmt.Sprintf("overrides.%s: no configured source offers a tool named %q", name, name)
		if len(cfg.Agents) > 0 {
			msg += " (unless an A2A agent's card brings it)"
		}
		out = append(out, msg+"; the override never applies: use the name the source publishes, before any rename (`toolnexus list`)")
	}
	out = append(out, viewsMatchingNothing(cfg)...)
	if cfg.Pinning.Mode == config.PinningHold && !cfg.Auth.Enabled() {
		out = append(out, `pinning.mode: "hold" with no auth configured: only an admin token or a principal in policy.approvers may approve a held definition, so a changed or new tool stays held for good; configure auth.tokens or auth.oidc`)
	}
	return out
}

// catalogSummary is --check's line about the catalog ("" when it does
// nothing).
func catalogSummary(cfg *config.Config) string {
	var parts []string
	if cfg.Pinning.On() {
		where := "in " + cfg.Pinning.Dir
		if cfg.Cluster.Redis != nil {
			where = "in Redis (cluster.redis)"
		}
		p := fmt.Sprintf("pinning %s, pins %s", cfg.Pinning.Mode, where)
		if cfg.Pinning.HoldFirstSight {
			p += ", first sight held"
		}
		parts = append(parts, p)
	}
	for _, name := range sortedNames(cfg.ToolOverrides) {
		parts = append(parts, fmt.Sprintf("override %s (%s)", name, cfg.ToolOverrides[name]))
	}
	if len(parts) == 0 {
		return ""
	}
	return "catalog: " + strings.Join(parts, "; ")
}

// viewsMatchingNothing: a named view (server.mcp.views) whose globs match
// no tool a configured source can offer serves an empty list at /mcp/NAME
// and over gRPC: usually a typo, or a glob on a tool's old name after an
// override renamed it. Tools an MCP server, an OpenAPI spec or an A2A
// agent brings are only known at run time: a glob that may match one of
// their names (by its prefix) is not reported.
func viewsMatchingNothing(cfg *config.Config) []string {
	names := staticToolNames(cfg)
	if cfg.CodeMode.Enabled {
		names["run_code"], names["describe_tools"] = true, true
	}
	for old, o := range cfg.ToolOverrides {
		if o.Name != "" {
			delete(names, old) // renamed: the old name is served no more
		}
	}
	for _, o := range cfg.ToolOverrides {
		if o.Name != "" {
			names[o.Name] = true
		}
	}
	prefixes := dynamicPrefixes(cfg)
	labels := sourceLabels(cfg)
	mayMatch := func(glob string) bool {
		if src, ok := strings.CutPrefix(glob, "source:"); ok {
			return slices.ContainsFunc(labels, func(l string) bool { ok, _ := path.Match(src, l); return ok })
		}
		for n := range names {
			if ok, _ := path.Match(glob, n); ok {
				return true
			}
		}
		lit := literalPrefix(glob)
		return len(cfg.Agents) > 0 || slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(lit, p) || strings.HasPrefix(p, lit) })
	}
	var out []string
	for _, name := range sortedNames(cfg.Server.MCP.Views) {
		globs := cfg.Server.MCP.Views[name].Tools
		if !slices.ContainsFunc(globs, mayMatch) {
			out = append(out, fmt.Sprintf("server.mcp.views.%s.tools: %q matches no tool a configured source offers, so /mcp/%s and the gRPC view %q serve no tool; check the names (`toolnexus list`; after an override, the new name)",
				name, globs, name, name))
		}
	}
	return out
}

// literalPrefix is a glob up to its first special character.
func literalPrefix(glob string) string {
	if i := strings.IndexAny(glob, `*?[\`); i >= 0 {
		return glob[:i]
	}
	return glob
}

// sourceLabels are the source labels the config's sources publish under.
func sourceLabels(cfg *config.Config) []string {
	var out []string
	add := func(on bool, label string) {
		if on {
			out = append(out, label)
		}
	}
	add(cfg.Builtins.Enabled, "builtin")
	add(len(cfg.Skills.Dirs) > 0, "skill")
	add(len(cfg.MCP) > 0, "mcp")
	add(len(cfg.HTTP.Tools) > 0 || len(cfg.HTTP.OpenAPI) > 0, "http")
	add(len(cfg.Agents) > 0, "a2a")
	add(cfg.Debug, "debug")
	return out
}
