package auth

import (
	"context"
	"log/slog"
	"strings"

	"github.com/toolnexus/toolnexus/internal/config"
)

// A JWT that verifies but whose groups match no auth.groups entry gets no
// tools: not a refused credential, yet the commonest "why do I see
// nothing" of an OIDC setup (Keycloak sends group paths, "/developers",
// by default). It is counted and logged at debug with what would fix it.
// Verified tokens are cached, so this runs once per token, not per call.

// anyGroupDefined reports whether one of groups is an auth.groups entry.
func anyGroupDefined(groups []string, defs map[string]config.Group) bool {
	for _, g := range groups {
		if _, ok := defs[g]; ok {
			return true
		}
	}
	return false
}

// unmatchedReporter logs (debug) and counts a token whose groups match no
// auth.groups entry.
func unmatchedReporter(issuer string, defs map[string]config.Group, opts Options) func(string, []string) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	return func(principal string, groups []string) {
		if opts.GroupsUnmatched != nil {
			opts.GroupsUnmatched()
		}
		if !log.Enabled(context.Background(), slog.LevelDebug) {
			return
		}
		log.Debug("JWT groups match no auth.groups entry: the caller gets no tools",
			"issuer", issuer, "principal", principal, "groups", groups, "hint", groupsHint(groups, defs))
	}
}

// groupsHint says what would make the groups match.
func groupsHint(groups []string, defs map[string]config.Group) string {
	if len(groups) == 0 {
		return "the token carries no groups: check auth.oidc[].groupsClaim and the provider's groups mapper"
	}
	for _, g := range groups {
		if _, ok := defs[strings.TrimPrefix(g, "/")]; ok && strings.HasPrefix(g, "/") {
			return "the token's groups are paths (" + g + "): name the auth.groups entry \"" + g + "\", or turn off \"Full group path\" in the provider's groups mapper (Keycloak)"
		}
	}
	return "name one of the token's groups in auth.groups, or check auth.oidc[].groupsClaim"
}
