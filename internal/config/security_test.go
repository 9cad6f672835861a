package config_test

import (
	"os"
	"path/filepath"
	"testing"
)

// Secrets may come from files (${file:/path}, as Kubernetes mounts them),
// so a token need not live in the server's environment at all.
func TestTokenFromASecretFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(file, []byte("token-from-a-file-0123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := parse(t, `{"auth": {"tokens": [{"name": "a", "token": "${file:`+file+`}"}]}}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Auth.Tokens[0].Value; got != "token-from-a-file-0123" {
		t.Fatalf("token = %q, want the file's content without the newline", got)
	}
}

func TestSecretAndChildEnvErrorsNameTheKey(t *testing.T) {
	t.Setenv("TN_CONFIG_TEST_SECRET", "s3cret-value")
	for _, tc := range []struct{ cfg, want string }{
		{`{"auth": {"tokens": [{"name": "a", "token": "${file:/nonexistent/tn-token}"}]}}`,
			"config: auth.tokens[0].token: cannot read the secret file /nonexistent/tn-token (referenced as ${file:/nonexistent/tn-token}): no such file or directory"},
		{`{"builtins": {"bash": {"env": ["GOPATH", "API_KEY=${file:/nonexistent/tn-key}"]}}}`,
			"config: builtins.bash.env[1]: cannot read the secret file /nonexistent/tn-key (referenced as ${file:/nonexistent/tn-key}): no such file or directory"},
		{`{"builtins": {"bash": {"env": ["1BAD"]}}}`,
			`config: builtins.bash.env[0]: "1BAD": must be NAME (pass the server's variable through) or NAME=value, NAME made of letters, digits and _`},
		{`{"builtins": {"bash": {"env": "PATH"}}}`,
			`config: builtins.bash.env: must be an array of strings: "NAME" to pass a variable through, "NAME=value" to set one`},
		{`{"builtins": {"bash": {"environment": []}}}`, "config: builtins.bash.environment: unknown key; the known key is env"},
		{`{"builtins": {"webfetch": {"allowHosts": ["http://localhost:8080"]}}}`,
			`config: builtins.webfetch.allowHosts[0]: "http://localhost:8080": give a host name, an IP address or a CIDR prefix, without a scheme or port`},
		{`{"builtins": {"webfetch": {"allowHosts": ["10.0.0.0/33"]}}}`,
			`config: builtins.webfetch.allowHosts[0]: "10.0.0.0/33" is not a CIDR prefix such as 10.0.0.0/8`},
	} {
		if got := mustFail(t, tc.cfg).Error(); got != tc.want {
			t.Errorf("%s\n got %s\nwant %s", tc.cfg, got, tc.want)
		}
	}
}

// The config keeps bash.env as written: comparing two configs on reload
// never compares a secret, and printing one shows none.
func TestBashEnvIsKeptAsWritten(t *testing.T) {
	t.Setenv("TN_CONFIG_TEST_SECRET", "s3cret-value")
	cfg, err := parse(t, `{"builtins": {"bash": {"env": ["KEY=${TN_CONFIG_TEST_SECRET}"]}, "webfetch": {"allowHosts": ["localhost", "10.0.0.0/8"]}}}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Builtins.Bash.Env; len(got) != 1 || got[0] != "KEY=${TN_CONFIG_TEST_SECRET}" {
		t.Fatalf("bash.env = %q", got)
	}
	if got := cfg.Builtins.Webfetch.AllowHosts; len(got) != 2 {
		t.Fatalf("webfetch.allowHosts = %q", got)
	}
}

func TestResourceDefaults(t *testing.T) {
	cfg, err := parse(t, `{"limits": {"tools": {"webfetch": {"maxConcurrency": 0, "timeout": 5000}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := *cfg.Limits.For("bash").MaxConcurrency; got != 8 {
		t.Errorf("bash maxConcurrency = %d, want the default 8", got)
	}
	if got := *cfg.Limits.For("webfetch").MaxConcurrency; got != 0 {
		t.Errorf("webfetch maxConcurrency = %d, want the configured 0 (no cap)", got)
	}
	if got := *cfg.Limits.For("webfetch").Timeout; got.Milliseconds() != 5000 {
		t.Errorf("webfetch timeout = %v, want the configured 5s", got)
	}
	if cfg.Server.Limits.WatchStreams != 64 {
		t.Errorf("server.limits.watchStreams = %d, want 64", cfg.Server.Limits.WatchStreams)
	}
	if got := mustFail(t, `{"server": {"limits": {"watchStreams": 0}}}`).Error(); got != "config: server.limits.watchStreams: must be at least 1 (open WatchTools streams per token)" {
		t.Errorf("watchStreams 0: %s", got)
	}
	if got := mustFail(t, `{"server": {"limits": {"streams": 5}}}`).Error(); got != "config: server.limits.streams: unknown key (check the spelling; see the README's config reference)" {
		t.Errorf("unknown key: %s", got)
	}
}
