package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestPolicySection(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ok.cedar"), []byte(`permit(principal, action, resource);`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "bad.cedar"), []byte("permit(principal, action, resource);\nforbid(principal, action, resource) when { 1 + };"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Parse([]byte(`{"policy": {"files": ["ok.cedar"], "mode": "shadow", "approvalTimeout": 60000, "approvers": ["ops"], "maxPending": 5}}`), "", dir)
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Policy
	if !p.Enabled() || p.Mode != PolicyShadow || p.ApprovalTimeout != time.Minute || p.MaxPending != 5 || p.Approvers[0] != "ops" || p.Set.Len() != 1 {
		t.Fatalf("%+v", p)
	}
	if cfg, _ := Parse([]byte(`{}`), "", dir); cfg.Policy.Enabled() || cfg.Policy.ApprovalTimeout != DefaultApprovalTimeout || cfg.Policy.MaxPending != DefaultMaxPendingApprovals {
		t.Fatalf("defaults: %+v", cfg.Policy)
	}
	for _, c := range []struct{ cfg, want string }{
		{`{"policy": {"files": ["bad.cedar"]}}`, "policy.files: " + filepath.Join(dir, "bad.cedar") + ":2:"},
		{`{"policy": {"files": ["nope.cedar"]}}`, "nope.cedar"},
		{`{"policy": {"mode": "audit"}}`, "policy.mode"},
		{`{"policy": {"approvalTimeout": 5}}`, "policy.approvalTimeout"},
		{`{"policy": {"maxPending": 0}}`, "policy.maxPending"},
		{`{"policy": {"maxPendingTotal": 0}}`, "policy.maxPendingTotal"},
		{`{"policy": {"maxPending": 20, "maxPendingTotal": 10}}`, "policy.maxPending"},
		{`{"policy": {"file": []}}`, "policy.file: unknown key"},
	} {
		_, err := Parse([]byte(c.cfg), "", dir)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.cfg, err, c.want)
		}
	}
}

func TestRateLimitKeys(t *testing.T) {
	t.Parallel()
	cfg, err := Parse([]byte(`{"limits": {"timeout": 5000,
		"principals": {"agent-a": {"callsPerSecond": 20, "burst": 40, "concurrent": 4}, "*": {"callsPerSecond": 0.5}},
		"tools": {"bash": {"callsPerSecond": 5, "maxConcurrency": 3}}}}`), "", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rl := cfg.RateLimits
	if a := rl.Principals["agent-a"]; a.CallsPerSecond != 20 || a.Burst != 40 || a.Concurrent != 4 {
		t.Fatalf("agent-a: %+v", a)
	}
	if s := rl.Principals["*"]; s.CallsPerSecond != 0.5 || s.Burst != 1 {
		t.Fatalf("*: %+v", s)
	}
	if b := rl.Tools["bash"]; b.CallsPerSecond != 5 || b.Burst != 5 {
		t.Fatalf("bash: %+v", b)
	}
	if *cfg.Limits.Tools["bash"].MaxConcurrency != 3 || cfg.Limits.Timeout != 5*time.Second {
		t.Fatalf("the other limits keys still parse: %+v", cfg.Limits)
	}
	for _, c := range []struct{ cfg, want string }{
		{`{"limits": {"principals": {"a": {"callsPerSecond": 0}}}}`, "limits.principals.a.callsPerSecond"},
		{`{"limits": {"principals": {"a": {"burst": 3}}}}`, "limits.principals.a.callsPerSecond: is required"},
		{`{"limits": {"principals": {"a": {"rate": 3}}}}`, "limits.principals.a.rate: unknown key"},
		{`{"limits": {"principals": {"a": {"concurrent": -1}}}}`, "limits.principals.a.concurrent"},
		{`{"limits": {"tools": {"bash": {"callsPerSecond": 1, "burst": 0}}}}`, "limits.tools.bash.burst"},
		{`{"limits": {"tools": {"bash": {"callsPerSec": 1}}}}`, "limits.tools.bash.callsPerSec: unknown key"},
	} {
		_, err := Parse([]byte(c.cfg), "", t.TempDir())
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.cfg, err, c.want)
		}
	}
}
