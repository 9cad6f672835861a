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
		{"url with the defaults", `{"cluster": {"redis": {"url": "redis://redis:6379/2"}}}`, func(t *testing.T, r *config.Redis) {
			if r.URL != "redis://redis:6379/2" || r.KeyPrefix != "toolnexus:" || r.Required || r.Timeout != 250*time.Millisecond {
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
		{"sentinel", `{"cluster": {"redis": {"addrs": ["s1:26379", "s2:26379"], "masterName": "mymaster", "db": 1}}}`, func(t *testing.T, r *config.Redis) {
			if r.MasterName != "mymaster" || len(r.Addrs) != 2 || r.DB != 1 {
				t.Fatalf("got %+v", *r)
			}
		}},
		{"redis cluster", `{"cluster": {"redis": {"addrs": ["n1:6379", "n2:6379", "n3:6379"], "tls": true}}}`, func(t *testing.T, r *config.Redis) {
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
