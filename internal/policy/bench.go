package policy

import (
	"fmt"
	"strings"
)

// BenchPolicies is n policies like an operator writes — one permit for
// everything, the rest forbids on other tools' names and argument patterns
// — for the benchmarks that measure a call with policies loaded.
func BenchPolicies(n int) string {
	var b strings.Builder
	b.WriteString("@id(\"all\")\npermit(principal, action, resource);\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "@id(\"f%d\")\n@reason(\"pattern %d\")\nforbid(principal, action, resource == Tool::\"tool_%d\") when { context.arguments has command && context.arguments.command like \"*pattern-%d*\" };\n", i, i, i, i)
	}
	return b.String()
}
