package config

import (
	"fmt"
	"strings"
)

// approverGroupPrefix is policy.GroupPrefix (the policy package decides;
// config only checks the spelling, without importing the matcher).
const approverGroupPrefix = "group:"

// checkApprovers refuses a policy.approvers entry that names nothing, and
// warns when a bare entry — a principal — has the name of a group in
// auth.groups: the author likely meant the group, which is written
// "group:NAME" (a bare name never matches a group, so that a caller whose
// subject happens to be the group's name is not an approver).
func checkApprovers(approvers []string, groups map[string]Group) (warnings []string, err error) {
	for i, a := range approvers {
		key := fmt.Sprintf("policy.approvers[%d]", i)
		g, isGroup := strings.CutPrefix(a, approverGroupPrefix)
		switch {
		case a == "":
			return nil, keyErr(key, "is empty; give a principal's name, or \"group:NAME\" for a group's members")
		case isGroup && g == "":
			return nil, keyErr(key, "\"group:\" names no group; write \"group:NAME\"")
		case !isGroup:
			if _, ok := groups[a]; ok {
				warnings = append(warnings, fmt.Sprintf("%s: %q is a principal's name, and also the name of a group in auth.groups; a bare name is only the principal of that name — write \"group:%s\" for the group's members", key, a, a))
			}
		}
	}
	return warnings, nil
}
