package config

import (
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolnexus/toolnexus/pkg/sources"
)

// DefaultClusterKeyPrefix starts every key and channel toolnexus uses in
// Redis, so one Redis can serve other programs. Each deployment adds its
// cluster.name to it ("toolnexus:NAME:"): two deployments on one Redis
// share nothing unless they are given the same name or prefix.
const DefaultClusterKeyPrefix = "toolnexus:"

// DefaultClusterTimeout bounds each Redis operation on a call's path.
const DefaultClusterTimeout = 250 * time.Millisecond

// Cluster is the `cluster` section: the state every replica shares. With
// no cluster.redis, each replica keeps its approvals, pending calls and
// rate limits in memory (one replica is the embedded default).
type Cluster struct {
	// Name names this deployment: its replicas share state in Redis under
	// "toolnexus:NAME:" (unless cluster.redis.keyPrefix says otherwise).
	// With cluster.redis one of the two is required. ${VAR} is expanded
	// (e.g. the Kubernetes namespace from the downward API).
	Name string
	// Redis is the shared store; nil when not configured.
	Redis *Redis
}

// Redis is cluster.redis: how to reach a Redis (or any RESP server —
// Valkey, a managed service), alone, behind Sentinel, or as a Redis
// Cluster, through go-redis's universal client.
type Redis struct {
	// URL is redis://[user[:password]@]host:port[/db] or rediss:// (TLS);
	// empty when Addrs is used.
	URL string
	// Addrs are host:port seeds: one is a single server, several a Redis
	// Cluster; with MasterName they are the Sentinels.
	Addrs []string
	// MasterName is the Sentinel master's name (Sentinel mode).
	MasterName string
	// Username and Password authenticate (ACL or requirepass). Password
	// may be ${file:/path} or ${VAR}; it is expanded when the config is
	// read and never printed.
	Username string
	Password string
	// SentinelPassword authenticates to the Sentinels, when they ask.
	SentinelPassword string
	// DB selects the database (not with Redis Cluster).
	DB int
	// TLS turns TLS on for Addrs (a rediss:// URL turns it on by itself);
	// CAFile is the PEM bundle to verify the server with (system roots
	// when empty).
	TLS    bool
	CAFile string
	// KeyPrefix starts every key and channel: cluster.redis.keyPrefix as
	// written, else "toolnexus:" + cluster.name + ":". KeyPrefixFrom is
	// the key it came from, for --check.
	KeyPrefix     string
	KeyPrefixFrom string
	// Required makes the health service answer NOT_SERVING while Redis
	// cannot be reached, so a load balancer moves away; by default a
	// replica keeps serving (approvals refused, rate limits local).
	Required bool
	// Timeout bounds each operation (default 250 ms).
	Timeout time.Duration
}

// String never shows the passwords.
func (r Redis) String() string {
	where := strings.Join(r.Addrs, ",")
	if r.URL != "" {
		where = redactURL(r.URL)
	}
	return fmt.Sprintf("Redis{%s prefix=%q required=%v}", where, r.KeyPrefix, r.Required)
}

// redactURL drops the user info of a redis:// URL.
func redactURL(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		rest := u[i+3:]
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			return u[:i+3] + "***@" + rest[at+1:]
		}
	}
	return u
}

func parseCluster(raw json.RawMessage) (Cluster, error) {
	var c Cluster
	if raw == nil {
		return c, nil
	}
	var r struct {
		Name  string          `json:"name"`
		Redis json.RawMessage `json:"redis"`
	}
	if err := strictDecode("cluster", raw, &r); err != nil {
		return c, err
	}
	name, err := sources.ExpandEnv(r.Name)
	if err != nil {
		return c, keyErr("cluster.name", "%v", err)
	}
	if name != "" && !validClusterName(name) {
		return c, keyErr("cluster.name", "%q must be 1 to 63 letters, digits, '.', '_' or '-' (it goes into every Redis key)", name)
	}
	c.Name = name
	if r.Redis = nonNull(r.Redis); r.Redis == nil {
		return c, nil
	}
	rd, err := parseRedis(r.Redis)
	if err != nil {
		return c, err
	}
	if err := deploymentPrefix(&rd, name); err != nil {
		return c, err
	}
	c.Redis = &rd
	return c, nil
}

// deploymentPrefix makes the key prefix this deployment's own: the one
// written in cluster.redis.keyPrefix, else one derived from cluster.name.
// With neither every deployment on a Redis would share one prefix, and
// with it each other's approvals, pending calls, rate limits and reloads —
// another deployment's approver could approve this one's calls — so the
// config is refused.
func deploymentPrefix(r *Redis, name string) error {
	if r.KeyPrefixFrom != "" {
		return nil // written as cluster.redis.keyPrefix
	}
	if name == "" {
		return keyErr("cluster.name", "is required with cluster.redis: name this deployment (e.g. \"prod\"; its keys become %sNAME:) or set cluster.redis.keyPrefix, so that two deployments on one Redis do not share approvals, pending calls, rate limits and reloads", DefaultClusterKeyPrefix)
	}
	r.KeyPrefix, r.KeyPrefixFrom = DefaultClusterKeyPrefix+name+":", "cluster.name"
	return nil
}

func validClusterName(s string) bool {
	if len(s) > 63 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func parseRedis(raw json.RawMessage) (Redis, error) {
	var r struct {
		URL              string   `json:"url"`
		Addrs            []string `json:"addrs"`
		MasterName       string   `json:"masterName"`
		Username         string   `json:"username"`
		Password         string   `json:"password"`
		SentinelPassword string   `json:"sentinelPassword"`
		DB               *int     `json:"db"`
		TLS              bool     `json:"tls"`
		CAFile           string   `json:"caFile"`
		KeyPrefix        *string  `json:"keyPrefix"`
		Required         bool     `json:"required"`
		Timeout          *int64   `json:"timeout"`
	}
	if err := strictDecode("cluster.redis", raw, &r); err != nil {
		return Redis{}, err
	}
	out := Redis{Addrs: r.Addrs, MasterName: r.MasterName, Username: r.Username, TLS: r.TLS, CAFile: r.CAFile,
		Required: r.Required, Timeout: DefaultClusterTimeout}
	var err error
	if out.Password, err = expandSecret("cluster.redis.password", r.Password); err != nil {
		return out, err
	}
	if out.Password == PlaceholderRedisPassword {
		return out, keyErr("cluster.redis.password", "is the placeholder the Kustomize component deploy/kubernetes/components/redis ships (%q), which anyone who read this repository knows; replace it in the toolnexus-redis Secret with a long random secret (kubectl create secret generic toolnexus-redis --from-literal=password=\"$(openssl rand -hex 32)\" --dry-run=client -o yaml | kubectl apply -f -), then restart Redis and the replicas", PlaceholderRedisPassword)
	}
	if out.SentinelPassword, err = expandSecret("cluster.redis.sentinelPassword", r.SentinelPassword); err != nil {
		return out, err
	}
	if err := checkRedisWhere(&out, r.URL, r.Addrs); err != nil {
		return out, err
	}
	if r.DB != nil {
		if *r.DB < 0 {
			return out, keyErr("cluster.redis.db", "must be 0 or more")
		}
		if len(r.Addrs) > 1 && r.MasterName == "" {
			return out, keyErr("cluster.redis.db", "a Redis Cluster has only database 0; remove db")
		}
		out.DB = *r.DB
	}
	if r.KeyPrefix != nil {
		if strings.ContainsAny(*r.KeyPrefix, " \r\n\t{}") {
			return out, keyErr("cluster.redis.keyPrefix", "%q may not hold spaces or braces (braces pick the Redis Cluster slot)", *r.KeyPrefix)
		}
		out.KeyPrefix, out.KeyPrefixFrom = *r.KeyPrefix, "cluster.redis.keyPrefix"
	}
	if r.Timeout != nil {
		if *r.Timeout < 1 {
			return out, keyErr("cluster.redis.timeout", "must be at least 1 millisecond (default 250)")
		}
		out.Timeout = time.Duration(*r.Timeout) * time.Millisecond
	}
	return out, nil
}

// checkRedisWhere validates url and addrs (exactly one of them) into out.
func checkRedisWhere(out *Redis, rawURL string, addrs []string) error {
	switch {
	case rawURL == "" && len(addrs) == 0:
		return keyErr("cluster.redis.url", "is required (e.g. redis://redis:6379/0, rediss:// for TLS), or set cluster.redis.addrs")
	case rawURL != "" && len(addrs) > 0:
		return keyErr("cluster.redis.url", "set either url or addrs, not both")
	case rawURL != "" && out.MasterName != "":
		return keyErr("cluster.redis.masterName", "needs the Sentinels in cluster.redis.addrs, not url")
	}
	if rawURL != "" {
		u, err := expandSecret("cluster.redis.url", rawURL)
		if err != nil {
			return err
		}
		opts, err := redis.ParseURL(u)
		if err != nil {
			// go-redis's message may repeat the URL; say what we saw without it.
			return keyErr("cluster.redis.url", "%s is not a redis:// or rediss:// URL (e.g. redis://redis:6379/0): %v", redactURL(u), strings.ReplaceAll(err.Error(), u, redactURL(u)))
		}
		if opts.Password != "" && !sources.HasSecretRef(rawURL) {
			return keyErr("cluster.redis.url", "holds a password in plain text; put it in cluster.redis.password as ${file:/path} or ${VAR}")
		}
		out.URL = u
		return nil
	}
	for i, a := range addrs {
		if _, port, err := net.SplitHostPort(a); err != nil || port == "" {
			return keyErr(fmt.Sprintf("cluster.redis.addrs[%d]", i), "%q is not host:port (e.g. redis-0.redis:6379)", a)
		}
	}
	return nil
}

// expandSecret expands ${VAR} and ${file:/path} in a secret value; the
// error names the key and the reference, never a value.
// PlaceholderRedisPassword is the password the redis Kustomize component's
// Secret generator ships; a server refuses to start with it (and --check
// says so), so the placeholder never guards a real deployment's Redis.
const PlaceholderRedisPassword = "change-me-to-a-long-random-secret"

func expandSecret(key, v string) (string, error) {
	out, err := sources.ExpandEnv(v)
	if err != nil {
		return "", keyErr(key, "%v", err)
	}
	return out, nil
}
