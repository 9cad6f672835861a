// Package cluster is the replicas' shared control plane on Redis
// (cluster.redis): one go-redis universal client (a single server, Sentinel
// or Redis Cluster), its toolnexus_cluster_* metrics, whether Redis can be
// reached right now, the list of live replicas, and the reload broadcast.
// The stores built on it (rate limits, suspended calls) live with their
// in-memory twins; this package only owns the connection.
//
// Redis being down never stops a replica: Up turns false within one
// health interval, the stores take their fallback (local limits; approvals
// refused), and Up turns true again when a PING answers — no restart.
package cluster

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/every"
)

// DefaultHealthInterval is how often the client PINGs Redis and refreshes
// this replica's heartbeat.
const DefaultHealthInterval = time.Second

// errClosed: the client was closed.
var errClosed = errors.New("cluster: the client is closed")

// replicaTTL is how long a replica that stopped heartbeating still counts
// as live (a few missed intervals, so one slow PING does not drop it).
const replicaTTL = 5 * time.Second

// Options are what the server adds to cluster.redis.
type Options struct {
	Logger *slog.Logger
	// Metrics is where toolnexus_cluster_* register (a fresh registry when nil).
	Metrics prometheus.Registerer
	// OnHealth hears every change of Up (the server's health service).
	OnHealth func(up bool)
	// HealthInterval overrides DefaultHealthInterval (tests).
	HealthInterval time.Duration
	// ReloadDeadline overrides how long a reload another replica asked
	// for may take before it is answered as not finished (tests; by
	// default nine tenths of DefaultReloadWait).
	ReloadDeadline time.Duration
}

// Client is one replica's connection to the control plane.
type Client struct {
	rdb      redis.UniversalClient
	cfg      config.Redis
	log      *slog.Logger
	metrics  *Metrics
	replica  string
	onHealth func(bool)
	interval time.Duration
	// reloadDeadline bounds a reload another replica asked for (reload.go).
	reloadDeadline time.Duration

	up atomic.Bool
	// servesReloads is set once ServeReloads subscribed this replica.
	servesReloads atomic.Bool
	// fwd is set once ServeForwards subscribed this replica (forward.go).
	fwd *forwarding
	// stopWatch ends the health checks (every.Start).
	stopWatch func()
	wg        sync.WaitGroup

	// subs are the subscriptions Close ends (subscribe.go).
	subsMu sync.Mutex
	subs   []*Subscription
	closed bool

	closeOnce sync.Once
}

// New connects to cfg's Redis. It does not wait for Redis: a replica
// starts while Redis is down and the first PING (at once, in the
// background) says whether it is up.
func New(cfg config.Redis, opts Options) (*Client, error) {
	uo, err := universalOptions(cfg)
	if err != nil {
		return nil, err
	}
	quietRedisLog.Do(func() { redis.SetLogger(debugLog{}) })
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	reg := opts.Metrics
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	c := &Client{rdb: redis.NewUniversalClient(uo), cfg: cfg, log: log, metrics: newMetrics(reg),
		replica: replicaID(), onHealth: opts.OnHealth, interval: opts.HealthInterval}
	if c.interval <= 0 {
		c.interval = DefaultHealthInterval
	}
	if c.reloadDeadline = opts.ReloadDeadline; c.reloadDeadline <= 0 {
		c.reloadDeadline = DefaultReloadWait * 9 / 10
	}
	c.rdb.AddHook(c.metrics.hook())
	c.check(context.Background()) // the first answer before serving
	// The health check, every interval: PING and the heartbeat.
	c.stopWatch = every.Start(c.interval, func() { c.check(context.Background()) })
	return c, nil
}

// universalOptions turns cluster.redis into go-redis's options: RESP2 and
// no client identity or maintenance push, so any RESP server speaks it.
func universalOptions(cfg config.Redis) (*redis.UniversalOptions, error) {
	uo := &redis.UniversalOptions{Addrs: cfg.Addrs, MasterName: cfg.MasterName, Username: cfg.Username,
		SentinelPassword: cfg.SentinelPassword, DB: cfg.DB, Protocol: 2, DisableIdentity: true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
		DialTimeout:              max(time.Second, cfg.Timeout), ReadTimeout: cfg.Timeout, WriteTimeout: cfg.Timeout,
		ContextTimeoutEnabled: true, MaxRetries: 1, DialerRetries: 1, PoolTimeout: cfg.Timeout}
	if cfg.URL != "" {
		o, err := redis.ParseURL(cfg.URL)
		if err != nil { // config.Parse checked it; only a hand-built config gets here
			return nil, &config.Error{Key: "cluster.redis.url", Msg: "not a redis:// or rediss:// URL"}
		}
		uo.Addrs, uo.Username, uo.Password, uo.DB, uo.TLSConfig = []string{o.Addr}, o.Username, o.Password, o.DB, o.TLSConfig
		if cfg.Username != "" {
			uo.Username = cfg.Username
		}
	}
	if cfg.Password != "" {
		uo.Password = cfg.Password
	}
	if cfg.TLS && uo.TLSConfig == nil {
		uo.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, &config.Error{Key: "cluster.redis.caFile", Msg: fmt.Sprintf("cannot read %s: %v", cfg.CAFile, err)}
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, &config.Error{Key: "cluster.redis.caFile", Msg: cfg.CAFile + " holds no PEM certificate"}
		}
		if uo.TLSConfig == nil {
			uo.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		uo.TLSConfig.RootCAs = pool
	}
	return uo, nil
}

// replicaID names this process among the replicas: the host name (the
// pod's, in Kubernetes), the pid and a random suffix, so two processes on
// one host (or a restarted pod) never share it.
func replicaID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "replica"
	}
	b := make([]byte, 3)
	_, _ = rand.Read(b) // crypto/rand never fails on Linux; a zero suffix is still unique with the pid
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b))
}

// Redis is the go-redis client, for the stores built on the control plane.
func (c *Client) Redis() redis.UniversalClient { return c.rdb }

// Key is the prefixed name of a key or channel.
func (c *Client) Key(name string) string { return c.cfg.KeyPrefix + name }

// Replica is this replica's id.
func (c *Client) Replica() string { return c.replica }

// Timeout bounds one operation (cluster.redis.timeout).
func (c *Client) Timeout() time.Duration { return c.cfg.Timeout }

// Required reports cluster.redis.required.
func (c *Client) Required() bool { return c.cfg.Required }

// Up reports whether Redis answered the last health check or operation.
// A nil Client (no cluster.redis) is never up.
func (c *Client) Up() bool { return c != nil && c.up.Load() }

// Metrics are the client's toolnexus_cluster_* series.
func (c *Client) Metrics() *Metrics { return c.metrics }

// Failed tells the client an operation failed because Redis could not be
// reached, so the stores stop trying until the next health check finds it
// again, instead of each call waiting for its timeout.
func (c *Client) Failed(err error) {
	if err == nil || !c.up.CompareAndSwap(true, false) {
		return
	}
	c.metrics.up.Set(0)
	c.log.Warn("cluster: Redis is unreachable; approvals and pending answers are refused, rate limits are local, until it answers again", "error", err)
	if c.onHealth != nil {
		c.onHealth(false)
	}
}

// check is one health check: PING and this replica's heartbeat in one
// round trip.
func (c *Client) check(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, max(c.cfg.Timeout, time.Second))
	defer cancel()
	now := time.Now().UnixMilli()
	_, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Ping(ctx)
		p.HSet(ctx, c.Key("replicas"), c.replica, now)
		return nil
	})
	if err != nil {
		c.Failed(err)
		return
	}
	if c.up.CompareAndSwap(false, true) {
		c.metrics.up.Set(1)
		c.log.Info("cluster: Redis answers; the replicas share approvals, pending calls, rate limits and reloads", "replica", c.replica)
		if c.onHealth != nil {
			c.onHealth(true)
		}
	}
}

// LiveReplicas are the replicas whose heartbeat is recent, this one
// included; long-gone ones are removed on the way.
func (c *Client) LiveReplicas(ctx context.Context) ([]string, error) {
	all, err := c.rdb.HGetAll(ctx, c.Key("replicas")).Result()
	if err != nil {
		return nil, err
	}
	cutoff := time.Now().Add(-replicaTTL).UnixMilli()
	var live, gone []string
	for id, seen := range all {
		var ms int64
		if _, err := fmt.Sscan(seen, &ms); err == nil && ms >= cutoff {
			live = append(live, id)
		} else if ms < cutoff-int64(time.Hour/time.Millisecond) {
			gone = append(gone, id)
		}
	}
	if len(gone) > 0 {
		c.rdb.HDel(ctx, c.Key("replicas"), gone...) // best effort: the next reader retries
	}
	return live, nil
}

// Close stops the health checks and the subscriptions (waiting for what
// they serve), removes this replica from the live list, and closes the
// connections.
func (c *Client) Close() error {
	var err error
	c.closeOnce.Do(func() {
		c.stopWatch()
		c.subsMu.Lock()
		subs := c.subs
		c.subs, c.closed = nil, true
		c.subsMu.Unlock()
		for _, s := range subs {
			s.Close()
		}
		c.wg.Wait()
		if c.up.Load() {
			ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Timeout)
			c.rdb.HDel(ctx, c.Key("replicas"), c.replica)
			cancel()
		}
		err = c.rdb.Close()
	})
	return err
}

// quietRedisLog sends go-redis's own log lines (one per failed dial while
// Redis is down) to the debug level: the client logs each outage and
// recovery once, at warn and info.
var quietRedisLog sync.Once

type debugLog struct{}

func (debugLog) Printf(ctx context.Context, format string, v ...any) {
	slog.Default().DebugContext(ctx, "go-redis: "+fmt.Sprintf(format, v...))
}
