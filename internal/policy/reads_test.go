package policy

import (
	"slices"
	"testing"

	"github.com/cedar-policy/cedar-go"
)

func TestReadsOf(t *testing.T) {
	t.Parallel()
	cases := []struct {
		when  string
		any   bool
		whole bool
		names []string
	}{
		{`true`, false, false, nil},
		{`context.session == "" && context.protocol == "grpc" && context has arguments`, false, false, nil},
		{`context.arguments has command && context.arguments.command like "*rm*"`, true, false, []string{"command"}},
		{`context["arguments"]["path"] == "x" || context.arguments has "mode"`, true, false, []string{"mode", "path"}},
		{`context.arguments has a.b && context.arguments.a.b.c == 1`, true, false, []string{"a"}},
		{`context.arguments.list.contains(context.arguments.item)`, true, false, []string{"item", "list"}},
		{`context.arguments == {"command": "ls"}`, true, true, nil},
		{`context.arguments.command == "ls" && {"x": context.arguments}.x has y`, true, true, []string{"command"}},
		{`(if true then context else {"arguments": {}}).arguments has command`, true, true, nil},
		{`context == {"arguments": {}, "session": "", "protocol": "grpc"}`, true, true, nil},
		{`resource.source == "mcp" && principal in Group::"ops"`, false, false, nil},
	}
	for _, c := range cases {
		p := mustPolicy(t, `permit(principal, action, resource) when { `+c.when+` };`)
		r := readsOf(p)
		if r.any != c.any || r.whole != c.whole || !slices.Equal(r.names, c.names) {
			t.Errorf("%s: %+v, want any %v whole %v names %v", c.when, r, c.any, c.whole, c.names)
		}
	}
	// unless reads count the same, and a group merges what each reads.
	var group argumentReads
	group.merge(readsOf(mustPolicy(t, `forbid(principal, action, resource) unless { context.arguments has path };`)))
	group.merge(readsOf(mustPolicy(t, `forbid(principal, action, resource) when { context.arguments.command == "x" };`)))
	if !group.any || group.whole || !slices.Equal(group.names, []string{"command", "path"}) {
		t.Errorf("merged: %+v", group)
	}
}

func mustPolicy(t *testing.T, src string) *cedar.Policy {
	t.Helper()
	var p cedar.Policy
	if err := p.UnmarshalCedar([]byte(src)); err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return &p
}

// A policy that uses the arguments record as a value sees every member,
// and one that names members sees exactly those: the decisions are the
// ones the full record gives.
func TestDecideSeesWhatItReads(t *testing.T) {
	t.Parallel()
	set, err := Parse("reads.cedar", []byte(`@id("all")
permit(principal, action, resource);

@id("exact")
forbid(principal, action, resource == Tool::"exact") when { context.arguments == {"command": "ls", "n": 2} };

@id("named")
forbid(principal, action, resource == Tool::"named") when { context.arguments has n && context.arguments.n > 1 };

@id("guarded")
forbid(principal, action, resource == Tool::"guarded") unless { context.arguments has mode };
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tool, args string
		want       Effect
	}{
		{"exact", `{"command":"ls","n":2}`, Deny},
		{"exact", `{"command":"ls","n":2,"more":true}`, Allow},
		{"exact", `{"command":"ls"}`, Allow},
		{"named", `{"n":2,"other":{"deep":[1,2]}}`, Deny},
		{"named", `{"n":1,"other":"x"}`, Allow},
		{"named", `{"m":5}`, Allow},
		{"named", `{"n":1,"other":{"k":1,"k":2}}`, Deny},
		{"guarded", `{"mode":null}`, Deny},
		{"guarded", `{"mode":"x"}`, Allow},
	} {
		if v := set.Decide(Input{Principal: "a", Tool: c.tool, Arguments: []byte(c.args)}); v.Effect != c.want {
			t.Errorf("%s %s: %+v (%s), want effect %d", c.tool, c.args, v, v.Denial(), c.want)
		}
	}
}
