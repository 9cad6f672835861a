package policy_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/internal/policy"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

const basics = `@id("everyone")
permit(principal, action == Action::"execute", resource);

@id("no-rm-rf")
@reason("rm -rf is never allowed")
forbid(principal, action, resource == Tool::"bash")
when { context.arguments has command && context.arguments.command like "*rm -rf*" };

@id("ops-only-deploy")
forbid(principal, action, resource == Tool::"deploy") unless { principal in Group::"ops" };

@id("approve-writes")
@approval("required")
permit(principal, action, resource == Tool::"write")
when { context.arguments has path && !(context.arguments.path like "docs/*") };
`

func TestDecide(t *testing.T) {
	t.Parallel()
	set, err := policy.Parse("basics.cedar", []byte(basics))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		in     policy.Input
		effect policy.Effect
		text   string
	}{
		{"allowed", policy.Input{Principal: "a", Tool: "bash", Source: "builtin", Arguments: []byte(`{"command":"ls"}`)}, policy.Allow, ""},
		{"forbidden pattern", policy.Input{Principal: "a", Tool: "bash", Arguments: []byte(`{"command":"cd / && rm -rf *"}`)}, policy.Deny,
			"denied by policy no-rm-rf: rm -rf is never allowed"},
		{"no reason", policy.Input{Principal: "a", Tool: "deploy", Arguments: []byte(`{}`)}, policy.Deny, "denied by policy ops-only-deploy"},
		{"group parent", policy.Input{Principal: "a", Groups: []string{"ops"}, Tool: "deploy", Arguments: []byte(`{}`)}, policy.Allow, ""},
		{"approval", policy.Input{Principal: "a", Tool: "write", Arguments: []byte(`{"path":"src/x.go","content":""}`)}, policy.Approval, ""},
		{"no approval inside docs", policy.Input{Principal: "a", Tool: "write", Arguments: []byte(`{"path":"docs/x.md"}`)}, policy.Allow, ""},
	}
	for _, c := range cases {
		v := set.Decide(c.in)
		if v.Effect != c.effect {
			t.Errorf("%s: effect %d, want %d (%+v)", c.name, v.Effect, c.effect, v)
		}
		if c.text != "" && v.Denial() != c.text {
			t.Errorf("%s: %q, want %q", c.name, v.Denial(), c.text)
		}
	}
}

// The tool's hints reach the policy as resource.annotations: a rule can
// send every destructive tool to approval without naming one, and a tool
// without hints has no annotations attribute at all.
func TestAnnotationsReachThePolicy(t *testing.T) {
	t.Parallel()
	set, err := policy.Parse("hints.cedar", []byte(`@id("all")
permit(principal, action, resource);

@id("destructive-needs-a-human")
@approval("required")
permit(principal, action, resource)
when { resource has annotations && resource.annotations has destructiveHint && resource.annotations.destructiveHint };

@id("no-open-world")
@reason("nothing that reaches the internet")
forbid(principal, action, resource)
when { resource has annotations && resource.annotations has openWorldHint && resource.annotations.openWorldHint };
`))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		hints  *tool.Annotations
		effect policy.Effect
	}{
		{"destructive", tool.DestructiveHints(), policy.Approval},
		{"read-only", tool.ReadOnlyHints(), policy.Allow},
		{"open world", tool.OpenWorldHints(), policy.Deny},
		{"no hints", nil, policy.Allow},
	}
	for _, c := range cases {
		// One tool name for all: the entity follows the hints it is
		// given, never an earlier call's.
		v := set.Decide(policy.Input{Principal: "a", Tool: "t", Source: "mcp", Annotations: c.hints, Arguments: []byte(`{}`)})
		if v.Effect != c.effect {
			t.Errorf("%s: effect %d, want %d (%+v)", c.name, v.Effect, c.effect, v)
		}
	}
}

// With policies loaded, a call no permit covers is denied (Cedar's default).
func TestNoPermitDenies(t *testing.T) {
	t.Parallel()
	set, err := policy.Parse("only-read.cedar", []byte(`permit(principal, action, resource == Tool::"read");`))
	if err != nil {
		t.Fatal(err)
	}
	v := set.Decide(policy.Input{Principal: "a", Tool: "bash"})
	if v.Effect != policy.Deny || v.Denial() != "denied by policy: no policy permits this call" {
		t.Fatalf("%+v %q", v, v.Denial())
	}
}

func TestRecordNumbers(t *testing.T) {
	t.Parallel()
	set, err := policy.Parse("n.cedar", []byte(`permit(principal, action, resource) when {
		context.arguments.n == 3 && context.arguments.f == "1.50" && context.arguments.big == "123456789012345678901234567890" &&
		context.arguments.list.contains("b") && !(context.arguments has gone) && context.arguments.nested.ok
	};`))
	if err != nil {
		t.Fatal(err)
	}
	v := set.Decide(policy.Input{Tool: "t", Arguments: []byte(`{"n":3,"f":1.50,"big":123456789012345678901234567890,"list":["a","b",null],"gone":null,"nested":{"ok":true}}`)})
	if v.Effect != policy.Allow {
		t.Fatalf("%+v", v)
	}
}

func TestLoadErrorsNameFileLineColumn(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cases := []struct{ src, want string }{
		{"permit(principal, action, resource);\n\nforbid(principal, action, resource) when { context.x like };", "bad.cedar:3:"},
		{"permit(principal == User::\"a\", action, resource);", `bad.cedar:1:1: principal: entity type "User"`},
		{"permit(principal, action == Action::\"run\", resource);", `bad.cedar:1:1: action: Action::"run"`},
		{"@approval(\"maybe\")\npermit(principal, action, resource);", `bad.cedar:1:1: @approval("maybe")`},
		{"@approval(\"required\")\nforbid(principal, action, resource);", `only means something on a permit`},
		{"@id(\"x\") permit(principal, action, resource);\n@id(\"x\") permit(principal, action, resource);", `policy id "x" is used twice`},
	}
	for i, c := range cases {
		path := filepath.Join(dir, "bad.cedar")
		if err := os.WriteFile(path, []byte(c.src), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := policy.Load([]string{path})
		var fe *policy.FileError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("case %d: %v, want a FileError containing %q", i, err, c.want)
		}
	}
	if _, err := policy.Load([]string{filepath.Join(dir, "missing.cedar")}); err == nil || !strings.Contains(err.Error(), "missing.cedar") {
		t.Errorf("missing file: %v", err)
	}
}

// BenchmarkDecide is one decision with 100 policies loaded, all of them
// applying to the tool called.
func BenchmarkDecide(b *testing.B) {
	set, err := policy.Parse("bench.cedar", []byte(policy.BenchPolicies(100, false)))
	if err != nil {
		b.Fatal(err)
	}
	in := policy.Input{Principal: "agent", Tool: "debug_echo", Source: "debug", Arguments: []byte(`{"text":"hello"}`), Protocol: "grpc"}
	b.ReportAllocs()
	for b.Loop() {
		if v := set.Decide(in); v.Effect != policy.Allow {
			b.Fatal(v)
		}
	}
}
