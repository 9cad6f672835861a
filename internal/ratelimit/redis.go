package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolnexus/toolnexus/internal/cluster"
)

// gcra takes one call from every bucket named in KEYS, all or none, in one
// atomic step on the Redis server: the generic cell rate algorithm, which
// keeps per bucket only its "theoretical arrival time" (TAT, microseconds
// on Redis's own clock, so the replicas' clocks never matter). ARGV holds,
// per key, the emission interval (µs per call) and the burst. It answers
// {0, 0} when admitted, or {i, µs} when bucket i (1-based) refuses and how
// long until it would admit. Each key expires once its bucket is full
// again, so idle principals leave nothing behind.
var gcra = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tats = {}
for i, key in ipairs(KEYS) do
  local interval = tonumber(ARGV[2*i-1])
  local burst = tonumber(ARGV[2*i])
  local tat = tonumber(redis.call('GET', key)) or now
  if tat < now then tat = now end
  local allowAt = tat + interval - interval * burst
  if allowAt > now then
    return {i, math.ceil(allowAt - now)}
  end
  tats[i] = tat + interval
end
for i, key in ipairs(KEYS) do
  redis.call('SET', key, string.format('%d', tats[i]), 'PX', math.ceil((tats[i] - now) / 1000) + 1)
end
return {0, 0}
`)

// Redis is Rates every replica shares: exact across replicas, on Redis's
// clock. While Redis cannot be asked Take fails at once (no call waits for
// a timeout), counted in toolnexus_cluster_fallbacks_total{store="ratelimit"},
// and the Limiter decides on its own buckets until the client finds Redis
// again.
type Redis struct {
	c *cluster.Client
}

// NewRedis keeps the buckets in c's Redis.
func NewRedis(c *cluster.Client) *Redis { return &Redis{c: c} }

var _ Rates = (*Redis)(nil)

// errDown: Redis was not asked, being known unreachable.
var errDown = errors.New("ratelimit: Redis is unreachable")

// WithCluster keeps the call-rate buckets in the control plane's Redis,
// so a rate is the rate across every replica; nil keeps them local.
// Concurrent caps stay per replica: they count calls running here.
func WithCluster(c *cluster.Client) Option {
	if c == nil {
		return WithRates(nil)
	}
	return WithRates(NewRedis(c))
}

// bucketKey is the Redis key of a bucket. Every bucket has the hash tag
// {rl}, so on a Redis Cluster the buckets of one call are in one slot and
// the script can take from both.
func (s *Redis) bucketKey(kind, name string) string { return s.c.Key("{rl}:" + kind + ":" + name) }

// Take implements Rates with one EVALSHA, bounded by ctx and
// cluster.redis.timeout.
func (s *Redis) Take(ctx context.Context, _ time.Time, principal, tool Bucket) (Refuser, time.Duration, error) {
	if !s.c.Up() {
		s.c.Metrics().Fallback(cluster.FallbackRateLimit)
		return Admitted, 0, errDown
	}
	keys := make([]string, 0, 2)
	args := make([]any, 0, 4)
	by := make([]Refuser, 0, 2)
	if principal.Name != "" { // first: a caller over its own rate spends no tool token
		keys = append(keys, s.bucketKey("p", principal.Name))
		args = append(args, interval(principal.CallsPerSecond), principal.Burst)
		by = append(by, ByPrincipal)
	}
	if tool.Name != "" {
		keys = append(keys, s.bucketKey("t", tool.Name))
		args = append(args, interval(tool.CallsPerSecond), tool.Burst)
		by = append(by, ByTool)
	}
	if len(keys) == 0 {
		return Admitted, 0, nil
	}
	opCtx, cancel := context.WithTimeout(ctx, s.c.Timeout())
	defer cancel()
	res, err := gcra.Run(opCtx, s.c.Redis(), keys, args...).Int64Slice()
	if err == nil && (len(res) != 2 || res[0] < 0 || int(res[0]) > len(by)) {
		err = fmt.Errorf("ratelimit: Redis answered %v", res)
	}
	if err != nil {
		if cluster.Unreachable(err) && ctx.Err() == nil {
			s.c.Failed(err)
		}
		s.c.Metrics().Fallback(cluster.FallbackRateLimit)
		return Admitted, 0, err
	}
	if res[0] == 0 {
		return Admitted, 0, nil
	}
	return by[res[0]-1], time.Duration(res[1]) * time.Microsecond, nil
}

// interval is the microseconds between calls at cps, at least 1.
func interval(cps float64) int64 { return max(1, int64(math.Round(1e6/cps))) }
