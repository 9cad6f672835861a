package policy_test

import (
	"testing"

	"github.com/toolnexus/toolnexus/internal/policy"
)

// Action::"connect" on Host::"<name>": a forbid for one principal, a
// permit scoped by host and port, and context.tool; policies that never
// name connect leave egress to the config.
func TestDecideConnect(t *testing.T) {
	set, err := policy.Parse("egress.cedar", []byte(`
@id("index-for-builders")
permit(principal in Group::"builders", action == Action::"connect", resource == Host::"pypi.org")
when { context.port == 443 };

@id("bash-to-github")
permit(principal, action == Action::"connect", resource)
when { context.tool == "bash" && resource == Host::"github.com" };

@id("mallory-offline")
@reason("mallory works offline")
forbid(principal == Principal::"mallory", action == Action::"connect", resource);
`))
	if err != nil {
		t.Fatal(err)
	}
	if !set.DecidesConnect() {
		t.Fatal("a set naming connect decides egress")
	}
	for _, tc := range []struct {
		name   string
		in     policy.ConnectInput
		effect policy.Effect
		policy string
	}{
		{"builder to the index", policy.ConnectInput{Principal: "ci", Groups: []string{"builders"}, Host: "pypi.org", Port: 443, Tool: "bash"}, policy.Allow, ""},
		{"builder on another port", policy.ConnectInput{Principal: "ci", Groups: []string{"builders"}, Host: "pypi.org", Port: 80, Tool: "bash"}, policy.Deny, ""},
		{"non-builder to the index", policy.ConnectInput{Principal: "alice", Host: "pypi.org", Port: 443, Tool: "bash"}, policy.Deny, ""},
		{"bash to github", policy.ConnectInput{Principal: "alice", Host: "github.com", Port: 443, Tool: "bash"}, policy.Allow, ""},
		{"another tool to github", policy.ConnectInput{Principal: "alice", Host: "github.com", Port: 443, Tool: "fetcher"}, policy.Deny, ""},
		{"mallory", policy.ConnectInput{Principal: "mallory", Host: "github.com", Port: 443, Tool: "bash"}, policy.Deny, "mallory-offline"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := set.DecideConnect(tc.in)
			if v.Effect != tc.effect || v.Policy != tc.policy {
				t.Fatalf("%+v", v)
			}
		})
	}
	calls, err := policy.Parse("calls.cedar", []byte(`permit(principal, action == Action::"execute", resource);`))
	if err != nil || calls.DecidesConnect() {
		t.Fatalf("a set without connect must leave egress to the config: %v", err)
	}
	if _, err := policy.Parse("bad.cedar", []byte(`permit(principal, action == Action::"dial", resource);`)); err == nil {
		t.Fatal("an unknown action must be refused")
	}
}
