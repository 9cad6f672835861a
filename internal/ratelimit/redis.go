package ratelimit

import (
	"context"
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

// shared are the limiter's buckets in Redis: exact across replicas. When
// Redis cannot be asked, the replica's own buckets decide (logged and
// counted) until the client finds Redis again.
type shared struct {
	c *cluster.Client
}

// Option changes how New builds a Limiter.
type Option func(*Limiter)

// WithCluster keeps the call-rate buckets in the control plane's Redis,
// so a rate is the rate across every replica; nil keeps them local.
// Concurrent caps stay per replica: they count calls running here.
func WithCluster(c *cluster.Client) Option {
	return func(l *Limiter) {
		if c != nil {
			l.shared = &shared{c: c}
		}
	}
}

// bucketKey is the Redis key of a bucket. Every bucket has the hash tag
// {rl}, so on a Redis Cluster the buckets of one call are in one slot and
// the script can take from both.
func (s *shared) bucketKey(kind, name string) string { return s.c.Key("{rl}:" + kind + ":" + name) }

// admitShared decides a call with the buckets in Redis. ok is false when
// it did not decide — no call rate applies (nothing to share: no round
// trip), or Redis could not be asked — and the local limiter decides.
// The concurrent slot (this replica's) is taken first, so a call it
// refuses spends nothing in Redis; a call Redis refuses gives it back.
func (l *Limiter) admitShared(who, tool string, p *principal, key string) (t Ticket, refused *Refusal, ok bool) {
	toolRate, hasTool := l.toolRates[tool]
	hasPrincipal := p != nil && p.cps > 0
	if (!hasTool && !hasPrincipal) || !l.shared.c.Up() {
		return Ticket{}, nil, false
	}
	if p != nil && p.concurrent > 0 {
		if p.running.Add(1) > p.concurrent {
			p.running.Add(-1)
			return Ticket{}, &Refusal{Limit: "limits.principals." + key + ".concurrent", RetryAfter: concurrentRetry}, true
		}
	}
	t = Ticket{p: p}
	keys := make([]string, 0, 2)
	args := make([]any, 0, 4)
	limits := make([]string, 0, 2)
	if hasPrincipal { // first: a caller over its own rate is told so, and spends no tool token
		keys = append(keys, l.shared.bucketKey("p", who))
		args = append(args, interval(p.cps), p.burst)
		limits = append(limits, "limits.principals."+key+".callsPerSecond")
	}
	if hasTool {
		keys = append(keys, l.shared.bucketKey("t", tool))
		args = append(args, interval(toolRate.CallsPerSecond), toolRate.Burst)
		limits = append(limits, "limits.tools."+tool+".callsPerSecond")
	}
	c := l.shared.c
	ctx, cancel := context.WithTimeout(context.Background(), c.Timeout())
	defer cancel()
	res, err := gcra.Run(ctx, c.Redis(), keys, args...).Int64Slice()
	if err != nil || len(res) != 2 || res[0] < 0 || int(res[0]) > len(limits) {
		if cluster.Unreachable(err) {
			c.Failed(err)
		}
		t.Release()
		return Ticket{}, nil, false
	}
	if res[0] == 0 {
		return t, nil, true
	}
	t.Release()
	return Ticket{}, &Refusal{Limit: limits[res[0]-1], RetryAfter: max(time.Millisecond, time.Duration(res[1])*time.Microsecond)}, true
}

// countFallback counts a call with a rate decided locally because Redis
// could not be asked.
func (l *Limiter) countFallback(tool string, p *principal) {
	if _, limited := l.toolRates[tool]; limited || (p != nil && p.cps > 0) {
		l.shared.c.Metrics().Fallback(cluster.FallbackRateLimit)
	}
}

// interval is the microseconds between calls at cps, at least 1.
func interval(cps float64) int64 { return max(1, int64(math.Round(1e6/cps))) }
