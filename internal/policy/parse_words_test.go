package policy_test

import (
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/internal/policy"
)

// A policy that does not parse is reported in words with file:line:column
// and, for a missing semicolon, the fix.
func TestParseErrorsInWords(t *testing.T) {
	for _, c := range []struct {
		name, src string
		want      []string
	}{
		{"missing semicolon at the end", "permit(principal, action, resource);\npermit(principal, action, resource)",
			[]string{"bad2.cedar:2:36: ", `expected ";" here but the file ends`, "every policy ends with a semicolon"}},
		{"missing semicolon between policies", "permit(principal, action, resource)\nforbid(principal, action, resource);",
			[]string{"bad2.cedar:2:7: ", `expected ";" here but found "forbid"`, "add it at the end of the policy before this point"}},
		{"missing comma", "permit(principal action, resource);",
			[]string{"bad2.cedar:1:", `expected "," here but found "action"`}},
		{"misspelt effect", "permt(principal, action, resource);",
			[]string{"bad2.cedar:1:", `a policy starts with permit or forbid, not "permt"`}},
		{"missing operand", "permit(principal, action, resource) when { context.x == };",
			[]string{"bad2.cedar:1:", `expected a value`, `found ";"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := policy.Parse("bad2.cedar", []byte(c.src))
			if err == nil {
				t.Fatal("parsed")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "exact got") {
				t.Errorf("error %q still reads like the parser's internals", err)
			}
		})
	}
}
