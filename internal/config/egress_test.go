package config_test

import (
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/egress"
)

func TestSandboxEgress(t *testing.T) {
	cfg, err := parse(t, `{"sandbox": {"egress": {"allow": ["pypi.org", "*.github.com:443", "10.1.0.0/16", "[::1]:8080"], "deny": ["evil.github.com"],
		"tools": {"fetcher": {"allow": ["api.example.com"]}}, "limits": {"connections": 10, "bytes": 5000, "idleTimeout": 1500}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	e := cfg.Sandbox.Egress
	if e == nil || len(e.Allow) != 4 || len(e.Deny) != 1 || len(e.Tools["fetcher"].Allow) != 1 {
		t.Fatalf("egress = %+v", e)
	}
	if want := (egress.Limits{Connections: 10, Bytes: 5000, Idle: 1500 * time.Millisecond}); e.Limits != want {
		t.Fatalf("limits = %+v", e.Limits)
	}
	global, tools := e.Rules()
	if len(global.Allow) != 4 || global.Deny[0].Key != "sandbox.egress.deny[0]" || tools["fetcher"].Allow[0].Key != "sandbox.egress.tools.fetcher.allow[0]" {
		t.Fatalf("rules = %+v %+v", global, tools)
	}

	none, err := parse(t, `{}`)
	if err != nil || none.Sandbox.Egress != nil {
		t.Fatalf("no egress by default: %+v %v", none.Sandbox.Egress, err)
	}
	def, err := parse(t, `{"sandbox": {"egress": {"allow": ["pypi.org"]}}}`)
	if err != nil || def.Sandbox.Egress.Limits != egress.DefaultLimits {
		t.Fatalf("default limits: %+v %v", def.Sandbox.Egress, err)
	}
}

// Each bad egress setting is a config error naming its key.
func TestSandboxEgressErrors(t *testing.T) {
	for _, tc := range []struct{ name, cfg, want string }{
		{"scheme", `{"sandbox": {"egress": {"allow": ["https://pypi.org"]}}}`,
			`config: sandbox.egress.allow[0]: "https://pypi.org" has a scheme, user or path`},
		{"bad port", `{"sandbox": {"egress": {"deny": ["ok.com", "a.com:99999"]}}}`,
			`config: sandbox.egress.deny[1]: "a.com:99999" has port "99999"; a port is 1 to 65535`},
		{"bad cidr", `{"sandbox": {"egress": {"allow": ["10.0.0.0/33"]}}}`,
			`config: sandbox.egress.allow[0]: "10.0.0.0/33" is not a CIDR prefix such as 10.0.0.0/8`},
		{"empty", `{"sandbox": {"egress": {"allow": [""]}}}`,
			`config: sandbox.egress.allow[0]: "" is empty`},
		{"bad wildcard", `{"sandbox": {"egress": {"allow": ["*"]}}}`,
			`config: sandbox.egress.allow[0]: "*" is not a host name`},
		{"tool pattern", `{"sandbox": {"egress": {"tools": {"bash": {"allow": ["a b"]}}}}}`,
			`config: sandbox.egress.tools.bash.allow[0]: "a b" has a scheme, user or path`},
		{"unknown key", `{"sandbox": {"egress": {"allowed": ["x.com"]}}}`,
			`config: sandbox.egress.allowed: unknown key`},
		{"negative limit", `{"sandbox": {"egress": {"limits": {"bytes": -1}}}}`,
			`config: sandbox.egress.limits.bytes: must be >= 0`},
		{"with network", `{"sandbox": {"network": true, "egress": {"allow": ["x.com"]}}}`,
			`config: sandbox.egress: cannot be set with sandbox.network true`},
		{"sandbox off", `{"sandbox": {"mode": "off", "egress": {"allow": ["x.com"]}}}`,
			`config: sandbox.egress: needs the sandbox`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(t, tc.cfg)
			if err == nil || len(err.Error()) < len(tc.want) || err.Error()[:len(tc.want)] != tc.want {
				t.Fatalf("err = %v\nwant prefix %s", err, tc.want)
			}
		})
	}
}
