package server

import (
	"fmt"
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
