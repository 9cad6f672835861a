package auth

import (
	"path"
	"slices"
	"strings"
)

// A principal's feature allowlists: which MCP resources (by URI as served)
// and prompts (by name as served) it may see, read and get. Each is a list
// of globs (path.Match syntax) on the URI or name, or "server:PATTERN" on
// the MCP server's name (auth.tokens[].resources and .prompts, and the same
// keys of auth.groups). A principal without a tools allowlist sees every
// resource and prompt; one with a tools allowlist sees only those its
// feature globs allow — none when it has none, so a token restricted before
// these keys existed is not widened by them.

// WithFeatures returns a copy of p with feature allowlists: resources and
// prompts nil leave that kind as it follows from the tools allowlist.
func (p *Principal) WithFeatures(resources, prompts []string) *Principal {
	q := *p
	q.resources = slices.Clone(resources)
	q.prompts = slices.Clone(prompts)
	return &q
}

// AllowsResource reports whether the caller may see and read a resource,
// by its URI as served and its server's name.
func (p *Principal) AllowsResource(uri, server string) bool {
	if p == nil {
		return true
	}
	return p.allowsFeature(p.resources, uri, server)
}

// AllowsPrompt reports whether the caller may see and get a prompt.
func (p *Principal) AllowsPrompt(name, server string) bool {
	if p == nil {
		return true
	}
	return p.allowsFeature(p.prompts, name, server)
}

func (p *Principal) allowsFeature(globs []string, key, server string) bool {
	if globs == nil {
		return p.patterns == nil
	}
	return FeatureGlobsAllow(globs, key, server)
}

// FeatureGlobsAllow reports whether one of globs matches key or, as
// "server:PATTERN", server.
func FeatureGlobsAllow(globs []string, key, server string) bool {
	for _, g := range globs {
		if s, ok := strings.CutPrefix(g, "server:"); ok {
			if m, _ := path.Match(s, server); m {
				return true
			}
			continue
		}
		if m, _ := path.Match(g, key); m {
			return true
		}
	}
	return false
}

// RestrictedFeatures reports whether the caller sees fewer resources or
// prompts than the server serves.
func (p *Principal) RestrictedFeatures() bool {
	return p != nil && (p.patterns != nil || p.resources != nil || p.prompts != nil)
}
