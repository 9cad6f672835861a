package policy

import "strings"

// GroupPrefix marks a group in a list that names principals and groups
// (policy.approvers): "group:reviewers" is every member of the group
// reviewers, a bare "reviewers" only the principal of that name. One list
// for both would make a caller whose subject is "reviewers" — a JWT's
// principal claim is often something users pick, such as
// preferred_username — an approver.
const GroupPrefix = "group:"

// IsApprover reports whether the principal named name, a member of groups,
// is in approvers: by its name written bare, or by one of its groups
// written "group:NAME". A name is never matched against a group entry,
// nor a group against a bare one.
func IsApprover(approvers []string, name string, groups []string) bool {
	for _, a := range approvers {
		if g, ok := strings.CutPrefix(a, GroupPrefix); ok {
			for _, have := range groups {
				if have == g {
					return true
				}
			}
			continue
		}
		if a == name {
			return true
		}
	}
	return false
}
