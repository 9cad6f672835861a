package auth

import (
	"slices"

	"github.com/toolnexus/toolnexus/internal/config"
)

// principalOfGroups makes a JWT caller: it may use the union of the tools
// of those of its groups that auth.groups lists, and none when no group
// matches; any matching group with admin makes it an admin.
func principalOfGroups(name string, groups []string, defs map[string]config.Group) *Principal {
	p := &Principal{Name: name, Groups: slices.Clone(groups), patterns: []string{}}
	for _, g := range groups {
		def, ok := defs[g]
		if !ok {
			continue
		}
		p.patterns = append(p.patterns, def.Tools...)
		p.resources = appendGlobs(p.resources, def.Resources)
		p.prompts = appendGlobs(p.prompts, def.Prompts)
		p.Admin = p.Admin || def.Admin
	}
	return p
}

// withGroups adds a static token's groups to it: their tools join the
// token's own (a token with no tools of its own and groups gets just the
// groups' tools), and an admin group makes the token an admin.
func withGroups(p *Principal, groups []string, defs map[string]config.Group) *Principal {
	g := principalOfGroups(p.Name, groups, defs)
	if p.patterns != nil {
		g.patterns = append(g.patterns, p.patterns...)
	}
	g.resources = appendGlobs(g.resources, p.resources)
	g.prompts = appendGlobs(g.prompts, p.prompts)
	g.Admin = g.Admin || p.Admin
	return g
}

// appendGlobs adds feature globs; nil stays nil only when both are.
func appendGlobs(to, more []string) []string {
	if more == nil {
		return to
	}
	return append(slices.Clip(to), more...)
}
