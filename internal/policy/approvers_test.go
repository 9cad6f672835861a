package policy

import "testing"

// A bare entry is a principal and "group:NAME" a group; neither stands for
// the other, whatever the names.
func TestIsApprover(t *testing.T) {
	t.Parallel()
	approvers := []string{"ops", "group:reviewers", "corp:alice"}
	for _, c := range []struct {
		name, who string
		groups    []string
		want      bool
	}{
		{"principal named bare", "ops", nil, true},
		{"member of a group entry", "bob", []string{"dev", "reviewers"}, true},
		{"qualified principal", "corp:alice", nil, true},
		{"subject equal to a group entry's name", "reviewers", nil, false},
		{"subject spelt as the group entry", "group:reviewers", nil, false},
		{"group equal to a bare principal entry", "bob", []string{"ops"}, false},
		{"another issuer's alice", "alice", nil, false},
		{"no groups, other name", "mallory", nil, false},
		{"group named like the prefix", "x", []string{"group:reviewers"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := IsApprover(approvers, c.who, c.groups); got != c.want {
				t.Fatalf("IsApprover(%v, %q, %v) = %v, want %v", approvers, c.who, c.groups, got, c.want)
			}
		})
	}
	if IsApprover(nil, "ops", []string{"ops"}) {
		t.Fatal("an empty list names no one")
	}
}
