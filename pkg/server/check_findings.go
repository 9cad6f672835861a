package server

import (
	"fmt"
	"slices"
	"strings"

	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/pkg/sources/builtin"
	"github.com/toolnexus/toolnexus/pkg/sources/mcp"
)

// checkFindings are what `--check` warns about beyond the parse warnings:
// configs that start but do not do what their author meant.
func checkFindings(cfg *config.Config) []string {
	var out []string
	out = append(out, approvalsWithoutAuth(cfg)...)
	out = append(out, policiesNamingUnknownTools(cfg)...)
	out = append(out, groupsMatchingNothing(cfg)...)
	out = append(out, audienceNotTheResource(cfg)...)
	if w := mcpStateKeyFinding(cfg); w != "" {
		out = append(out, w)
	}
	out = append(out, cfg.OAuthWarnings()...)
	out = append(out, catalogFindings(cfg)...) // check_catalog.go
	return out
}

// approvalsWithoutAuth: with no credential every caller is the same
// anonymous principal, so the caller who waits for an approval is also the
// one who may give it.
func approvalsWithoutAuth(cfg *config.Config) []string {
	if !cfg.Policy.Enabled() || !cfg.Policy.Set.HasApprovals() || cfg.Auth.Enabled() {
		return nil
	}
	return []string{`policy.files: @approval("required") policies with no auth configured: every caller is the same anonymous principal, so no one but the caller can decide an approval; configure auth.tokens or auth.oidc (and policy.approvers)`}
}

// policiesNamingUnknownTools: a policy scoped to a tool no source can offer
// never applies — usually a typo in the tool's name. Only the static
// sources' names are known before start; a name that an MCP server, an
// OpenAPI spec or an agent may bring (by its prefix) is not reported.
func policiesNamingUnknownTools(cfg *config.Config) []string {
	if !cfg.Policy.Enabled() {
		return nil
	}
	static := staticToolNames(cfg)
	prefixes := dynamicPrefixes(cfg)
	var out []string
	for _, nt := range cfg.Policy.Set.ToolsNamed() {
		if static[nt.Name] || slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(nt.Name, p) }) {
			continue
		}
		msg := fmt.Sprintf("policy.files: %s names Tool::%q, which no configured source offers", nt.At, nt.Name)
		if len(cfg.Agents) > 0 {
			msg += " (unless an A2A agent's card brings it)"
		}
		out = append(out, msg+"; the policy never applies: check the tool's name (`toolnexus list`)")
	}
	return out
}

func staticToolNames(cfg *config.Config) map[string]bool {
	names := map[string]bool{}
	if cfg.Builtins.Enabled {
		for _, n := range builtin.Names {
			if cfg.Builtins.Keep(n) {
				names[n] = true
			}
		}
	}
	if len(cfg.Skills.Dirs) > 0 {
		names["skill"] = true
	}
	for _, t := range cfg.HTTP.Tools {
		names[t.Name] = true
	}
	if cfg.Debug {
		for _, n := range []string{"debug_echo", "debug_sleep", "debug_fail", "debug_panic"} {
			names[n] = true
		}
	}
	return names
}

// dynamicPrefixes are the name prefixes of the tools MCP servers and
// OpenAPI specs bring ("" when one keeps its tools' own names: then any
// name may come from it).
func dynamicPrefixes(cfg *config.Config) []string {
	var out []string
	for name, sc := range cfg.MCP {
		out = append(out, mcpPrefix(name, sc))
	}
	for _, o := range cfg.HTTP.OpenAPI {
		out = append(out, o.Prefix)
	}
	return out
}

func mcpPrefix(name string, sc mcp.ServerConfig) string {
	if sc.Prefix != nil {
		return *sc.Prefix
	}
	return name + "_"
}

// groupsMatchingNothing: an auth.groups entry is reached through a token's
// groups or an OIDC token's groups claim; with neither, it grants nothing.
func groupsMatchingNothing(cfg *config.Config) []string {
	if len(cfg.Auth.Groups) == 0 || len(cfg.Auth.OIDC) > 0 {
		return nil // OIDC groups are only known when a token arrives
	}
	used := map[string]bool{}
	for _, t := range cfg.Auth.Tokens {
		for _, g := range t.Groups {
			used[g] = true
		}
	}
	var out []string
	for _, g := range sortedNames(cfg.Auth.Groups) {
		if !used[g] {
			out = append(out, fmt.Sprintf("auth.groups.%s: no token names this group and no auth.oidc issuer is configured, so it matches no caller", g))
		}
	}
	return out
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// audienceNotTheResource: an MCP client that follows /mcp's protected
// resource metadata asks its authorization server for a token meant for
// the advertised resource (RFC 8707); an issuer whose audience is
// something else refuses every such token.
func audienceNotTheResource(cfg *config.Config) []string {
	if cfg.Server.MCP.Listen == "" || len(cfg.Auth.OIDC) == 0 {
		return nil
	}
	res := advertisedResource(cfg)
	var out []string
	for i, iss := range cfg.Auth.OIDC {
		if iss.Audience != res {
			out = append(out, fmt.Sprintf("auth.oidc[%d].audience: %q is not the resource /mcp advertises in /.well-known/oauth-protected-resource (%s); MCP clients that follow it get tokens this issuer entry refuses: set server.mcp.resource to the audience, or the audience to the resource", i, iss.Audience, res))
		}
	}
	return out
}

// advertisedResource is server.mcp.resource, or what the gateway derives
// from its listener (scheme://listen/mcp).
func advertisedResource(cfg *config.Config) string {
	if r := cfg.Server.MCP.Resource; r != "" {
		return r
	}
	scheme := "http"
	if cfg.Server.TLS.Enabled() {
		scheme = "https"
	}
	return scheme + "://" + cfg.Server.MCP.Listen + "/mcp"
}

// checkSummary is what `--check` prints after the findings: where the
// server listens, which sources it starts and who may call it.
func checkSummary(cfg *config.Config) []string {
	listen := []string{"grpc " + cfg.Server.Listen}
	if cfg.Server.MetricsListen != "" {
		listen = append(listen, "metrics "+cfg.Server.MetricsListen)
	}
	if cfg.Server.MCP.Listen != "" {
		listen = append(listen, "mcp "+cfg.Server.MCP.Listen+" (resource "+advertisedResource(cfg)+")")
	}
	if w := cfg.Server.Web; w.Listen != "" {
		web := "web " + w.Listen
		if w.PublicURL != "" {
			web += " (public " + w.PublicURL + ")"
		}
		listen = append(listen, web)
	}
	if cfg.Server.TLS.Enabled() {
		listen = append(listen, "TLS")
	}
	var src []string
	if cfg.Builtins.Enabled {
		src = append(src, "builtins")
	}
	if n := len(cfg.Skills.Dirs); n > 0 {
		src = append(src, fmt.Sprintf("skills (%d dirs)", n))
	}
	for _, name := range sortedNames(cfg.MCP) {
		sc := cfg.MCP[name]
		kind := "remote"
		if sc.Type == mcp.TypeLocal {
			kind = "local"
			if sc.Sandbox != nil {
				kind += ", sandboxed"
			}
		}
		if sc.OAuth != nil {
			kind += ", oauth"
		}
		if sc.Disabled {
			kind += ", disabled"
		}
		src = append(src, fmt.Sprintf("mcp %s (%s)", name, kind))
	}
	if n := len(cfg.HTTP.Tools); n > 0 {
		src = append(src, fmt.Sprintf("http (%d tools)", n))
	}
	if n := len(cfg.HTTP.OpenAPI); n > 0 {
		src = append(src, fmt.Sprintf("openapi (%d specs)", n))
	}
	for _, id := range sortedNames(cfg.Agents) {
		src = append(src, "a2a "+id)
	}
	if cfg.CodeMode.Enabled {
		src = append(src, "code mode (run_code, describe_tools)")
	}
	if cfg.Debug {
		src = append(src, "debug tools")
	}
	ident := "none (every caller is anonymous)"
	if cfg.Auth.Enabled() {
		var parts []string
		if n := len(cfg.Auth.Tokens); n > 0 {
			parts = append(parts, fmt.Sprintf("%d tokens", n))
		}
		for _, iss := range cfg.Auth.OIDC {
			parts = append(parts, fmt.Sprintf("oidc %s (audience %s)", iss.Issuer, iss.Audience))
		}
		if n := len(cfg.Auth.Groups); n > 0 {
			parts = append(parts, fmt.Sprintf("%d groups", n))
		}
		ident = strings.Join(parts, ", ")
	}
	if len(src) == 0 {
		src = []string{"none"}
	}
	out := []string{
		"listeners: " + strings.Join(listen, ", "),
		"sources: " + strings.Join(src, ", "),
		"identity: " + ident,
		clusterSummary(cfg),
	}
	if c := catalogSummary(cfg); c != "" {
		out = append(out, c)
	}
	return out
}
