package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolnexus/toolnexus/internal/config"
)

func TestClusterRedisIsOffUnlessConfigured(t *testing.T) {
	for _, text := range []string{`{}`, `{"cluster": {}}`, `{"cluster": {"redis": null}}`} {
		cfg, err := parse(t, text)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		if cfg.Cluster.Redis != nil {
			t.Fatalf("%s: cluster.redis = %v, want none", text, cfg.Cluster.Redis)
		}
	}
}

func TestClusterRedisForms(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "redis-password")
	if err := os.WriteFile(secret, []byte("pa55-from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, cfg string
		check     func(t *testing.T, r *config.Redis)
	}{
		{"url with the defaults", `{"cluster": {"name": "prod", "redis": {"url": "redis://redis:6379/2"}}}`, func(t *testing.T, r *config.Redis) {
			if r.URL != "redis://redis:6379/2" || r.KeyPrefix != "toolnexus:prod:" || r.KeyPrefixFrom != "cluster.name" || r.Required || r.Timeout != 250*time.Millisecond {
				t.Fatalf("got %+v", *r)
			}
		}},
		{"rediss with a password from a file", `{"cluster": {"redis": {"url": "rediss://redis:6380", "password": "${file:` + secret + `}", "required": true, "keyPrefix": "prod:", "timeout": 100}}}`,
			func(t *testing.T, r *config.Redis) {
				if r.Password != "pa55-from-file" || !r.Required || r.KeyPrefix != "prod:" || r.Timeout != 100*time.Millisecond {
					t.Fatalf("got %+v", *r)
				}
				if strings.Contains(r.String(), "pa55") {
					t.Fatalf("String shows the password: %s", r)
				}
			}},
		{"sentinel", `{"cluster": {"name": "a", "redis": {"addrs": ["s1:26379", "s2:26379"], "masterName": "mymaster", "db": 1}}}`, func(t *testing.T, r *config.Redis) {
			if r.MasterName != "mymaster" || len(r.Addrs) != 2 || r.DB != 1 {
				t.Fatalf("got %+v", *r)
			}
		}},
		{"redis cluster", `{"cluster": {"name": "a", "redis": {"addrs": ["n1:6379", "n2:6379", "n3:6379"], "tls": true}}}`, func(t *testing.T, r *config.Redis) {
			if len(r.Addrs) != 3 || !r.TLS {
				t.Fatalf("got %+v", *r)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := parse(t, tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, cfg.Cluster.Redis)
		})
	}
}

func TestClusterRedisErrorsNameTheKey(t *testing.T) {
	t.Setenv("TN_REDIS_PW", "from-env")
	for _, tc := range []struct{ name, cfg, want string }{
		{"no address", `{"cluster": {"redis": {}}}`, "config: cluster.redis.url: is required"},
		{"both forms", `{"cluster": {"redis": {"url": "redis://a:1", "addrs": ["b:1"]}}}`, "config: cluster.redis.url: set either url or addrs, not both"},
		{"bad scheme", `{"cluster": {"redis": {"url": "http://redis:6379"}}}`, "config: cluster.redis.url: http://redis:6379 is not a redis:// or rediss:// URL"},
		{"plain-text password", `{"cluster": {"redis": {"url": "redis://:hunter22@redis:6379"}}}`, "config: cluster.redis.url: holds a password in plain text"},
		{"bad addr", `{"cluster": {"redis": {"addrs": ["redis"]}}}`, `config: cluster.redis.addrs[0]: "redis" is not host:port`},
		{"sentinel with url", `{"cluster": {"redis": {"url": "redis://a:1", "masterName": "m"}}}`, "config: cluster.redis.masterName: needs the Sentinels"},
		{"db on a cluster", `{"cluster": {"redis": {"addrs": ["a:1", "b:1"], "db": 3}}}`, "config: cluster.redis.db: a Redis Cluster has only database 0"},
		{"prefix with a brace", `{"cluster": {"redis": {"url": "redis://a:1", "keyPrefix": "{x}"}}}`, "config: cluster.redis.keyPrefix:"},
		{"zero timeout", `{"cluster": {"redis": {"url": "redis://a:1", "timeout": 0}}}`, "config: cluster.redis.timeout: must be at least 1 millisecond"},
		{"missing secret file", `{"cluster": {"redis": {"url": "redis://a:1", "password": "${file:/nonexistent/tn-redis}"}}}`,
			"config: cluster.redis.password: cannot read the secret file /nonexistent/tn-redis"},
		{"unknown key", `{"cluster": {"redis": {"url": "redis://a:1", "prefix": "x"}}}`, "config: cluster.redis.prefix: unknown key"},
		{"unknown section key", `{"cluster": {"valkey": {}}}`, "config: cluster.valkey: unknown key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := mustFail(t, tc.cfg).Error()
			if !strings.HasPrefix(got, tc.want) {
				t.Fatalf("got  %s\nwant %s…", got, tc.want)
			}
			if strings.Contains(got, "hunter22") || strings.Contains(got, "from-env") {
				t.Fatalf("the error shows a secret: %s", got)
			}
		})
	}
}

// Two deployments on one Redis share nothing by default: the prefix is
// the deployment's (cluster.name), or written out; with neither the
// config is refused, naming the key.
func TestClusterKeyPrefixIsTheDeployments(t *testing.T) {
	t.Setenv("TN_NAMESPACE", "team-b")
	for _, tc := range []struct{ name, cfg, prefix, from, err string }{
		{"from the name", `{"cluster": {"name": "prod", "redis": {"url": "redis://a:1"}}}`, "toolnexus:prod:", "cluster.name", ""},
		{"from an expanded name", `{"cluster": {"name": "${TN_NAMESPACE}", "redis": {"url": "redis://a:1"}}}`, "toolnexus:team-b:", "cluster.name", ""},
		{"written out wins", `{"cluster": {"name": "prod", "redis": {"url": "redis://a:1", "keyPrefix": "tn-prod:"}}}`, "tn-prod:", "cluster.redis.keyPrefix", ""},
		{"neither", `{"cluster": {"redis": {"url": "redis://a:1"}}}`, "", "", "config: cluster.name: is required with cluster.redis"},
		{"a name with a colon", `{"cluster": {"name": "a:b", "redis": {"url": "redis://a:1"}}}`, "", "", `config: cluster.name: "a:b" must be 1 to 63 letters`},
		{"an unset variable", `{"cluster": {"name": "${TN_NO_SUCH_VAR}", "redis": {"url": "redis://a:1"}}}`, "", "", "config: cluster.name:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := parse(t, tc.cfg)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r := cfg.Cluster.Redis; r.KeyPrefix != tc.prefix || r.KeyPrefixFrom != tc.from {
				t.Fatalf("prefix %q from %q, want %q from %q", r.KeyPrefix, r.KeyPrefixFrom, tc.prefix, tc.from)
			}
		})
	}
	if cfg, err := parse(t, `{"cluster": {"name": "solo"}}`); err != nil || cfg.Cluster.Name != "solo" || cfg.Cluster.Redis != nil {
		t.Fatalf("a name without Redis: %+v %v", cfg.Cluster, err)
	}
}

// server.mcp.stateless decides /mcp's mode; unset it follows
// sessions.shared, as before it existed.
func TestMCPStatelessIsItsOwnKey(t *testing.T) {
	for _, tc := range []struct {
		cfg  string
		want bool
	}{
		{`{}`, false},
		{`{"sessions": {"shared": true}}`, true},
		{`{"server": {"mcp": {"stateless": true}}}`, true},
		{`{"sessions": {"shared": true}, "server": {"mcp": {"stateless": false}}}`, false},
	} {
		cfg, err := parse(t, tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.MCPStateless(); got != tc.want {
			t.Errorf("%s: MCPStateless = %v, want %v", tc.cfg, got, tc.want)
		}
	}
	if _, err := parse(t, `{"server": {"mcp": {"stateless": "yes"}}}`); err == nil || !strings.Contains(err.Error(), "server.mcp") {
		t.Fatalf("a non-boolean: %v", err)
	}
}
