package policy

import (
	"fmt"
	"strings"
)

// BenchPolicies is n policies like an operator writes — one permit for
// everything, the rest forbids on argument patterns, scoped to other tools
// (resource == Tool::"tool_N") or, with scoped false, to every tool — for
// the benchmarks that measure a call with policies loaded.
func BenchPolicies(n int, scoped bool) string {
	var b strings.Builder
	b.WriteString("@id(\"all\")\npermit(principal, action, resource);\n")
	for i := 1; i < n; i++ {
		resource := fmt.Sprintf("resource == Tool::\"tool_%d\"", i)
		if !scoped {
			resource = "resource"
		}
		fmt.Fprintf(&b, "@id(\"f%d\")\n@reason(\"pattern %d\")\nforbid(principal, action, %s) when { context.arguments has command && context.arguments.command like \"*pattern-%d*\" };\n", i, i, resource, i)
	}
	return b.String()
}
