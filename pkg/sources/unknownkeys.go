package sources

import (
	"fmt"
	"slices"
	"strings"
)

// filterLike are keys other MCP clients (and hopeful operators) use to
// narrow what a server exposes: includeTools/excludeTools (Gemini CLI),
// allowedTools, disabledTools, and the singular "tool".
var filterLike = []string{"tool", "tools", "skills", "includetools", "excludetools", "allowedtools",
	"allowtools", "disabledtools", "denytools", "blockedtools", "operations", "allow", "deny", "include", "exclude"}

// UnknownKey decides what an unknown key in a source entry is. Unknown keys
// are tolerated (a warning) so a config written for another client loads,
// except where ignoring one would expose more than the operator meant —
// a typo must fail closed:
//   - the key is a near miss of a known one ("tool" for "tools",
//     "sandox" for "sandbox"): the setting it was meant to be is missing;
//   - the key looks like a filter of some other client ("excludeTools"):
//     it would be dropped and every tool exposed;
//   - the entry carries a filter (hasFilter): its author is narrowing the
//     entry, so nothing in it may be silently ignored.
//
// fatal says which; msg is the text for either (the caller prefixes the
// key path).
func UnknownKey(k string, known []string, hasFilter bool) (fatal bool, msg string) {
	if s := Suggest(k, known); s != "" {
		return true, fmt.Sprintf("unknown key; did you mean %q? (a misspelt key is refused, not ignored: the setting it was meant to be would be missing)", s)
	}
	lk := strings.ToLower(k)
	for _, f := range filterLike {
		if lk != f {
			continue
		}
		how := `this entry spells it "tools": {"name": true|false}`
		if !slices.Contains(known, "tools") {
			how = "this entry has none; narrow its tools with auth.tokens[].tools, auth.groups or a policy"
		}
		return true, "unknown key: it looks like a tool filter, and " + how + " (refused, not ignored: a dropped filter would expose every tool)"
	}
	if hasFilter {
		return true, fmt.Sprintf("unknown key in an entry that filters its tools (refused, not ignored, so the filter is read as written); known keys: %s", strings.Join(known, ", "))
	}
	return false, fmt.Sprintf("unknown key %q is ignored", k)
}
