// Package ratelimit refuses calls over limits.principals (calls per second,
// burst, calls at once per principal) and limits.tools.NAME.callsPerSecond
// (per tool, across callers), with how long to wait before retrying.
//
// A Limiter is built per config and swapped whole on reload (the buckets
// start full again). Finding a principal's bucket is a sync.Map read; the
// bucket itself is golang.org/x/time/rate's, whose short mutex only
// callers of the same principal (or tool) ever share.
//
// With WithCluster (cluster.redis) the call rates are kept in Redis
// instead (redis.go): one atomic round trip per call that has a rate, none
// for a call without one; the local buckets take over while Redis is down.
package ratelimit

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/toolnexus/toolnexus/internal/config"
)

// Wildcard is the limits.principals key for every principal not named.
const Wildcard = "*"

// concurrentRetry is the hint for a caller over its concurrent cap: no
// bucket says when a slot frees, so it gets a short, fixed wait.
const concurrentRetry = 250 * time.Millisecond

// Limiter holds the buckets of one config.
type Limiter struct {
	named map[string]config.PrincipalRate
	star  *config.PrincipalRate
	tools map[string]*rate.Limiter
	// toolRates are the tools' rates, for the shared buckets.
	toolRates map[string]config.Rate
	// shared keeps the rates in Redis; nil = local buckets only.
	shared *shared
	// principals are the callers' states, made on first call.
	principals sync.Map // string → *principal
}

type principal struct {
	bucket     *rate.Limiter // nil = no rate
	cps        float64
	burst      int
	concurrent int64 // 0 = no cap
	running    atomic.Int64
}

// Refusal says which limit refused a call and when to retry.
type Refusal struct {
	// Limit is the config key of the limit, e.g. "limits.principals.agent-a".
	Limit string
	// RetryAfter is how long until the call would be admitted.
	RetryAfter time.Duration
}

// Ticket is an admitted call; Release it when the call ends.
type Ticket struct{ p *principal }

// Release frees the call's concurrent slot.
func (t Ticket) Release() {
	if t.p != nil && t.p.concurrent > 0 {
		t.p.running.Add(-1)
	}
}

// New builds the limiter of cfg, or nil when no limit is set.
func New(cfg config.RateLimits, opts ...Option) *Limiter {
	if !cfg.Enabled() {
		return nil
	}
	l := &Limiter{named: cfg.Principals, tools: make(map[string]*rate.Limiter, len(cfg.Tools)), toolRates: cfg.Tools}
	for _, o := range opts {
		o(l)
	}
	if r, ok := cfg.Principals[Wildcard]; ok {
		l.star = &r
	}
	for name, r := range cfg.Tools {
		l.tools[name] = rate.NewLimiter(rate.Limit(r.CallsPerSecond), r.Burst)
	}
	return l
}

// Admit takes one call of principal to tool, or says why not. The
// principal's limits are checked first, then the tool's shared bucket, and
// a refused call is charged nothing: a caller over its own limit does not
// spend the tool's tokens, which other callers share. A nil Limiter
// admits everything.
func (l *Limiter) Admit(who, tool string, now time.Time) (Ticket, *Refusal) {
	if l == nil {
		return Ticket{}, nil
	}
	p, key := l.principal(who)
	if l.shared != nil {
		if t, r, ok := l.admitShared(who, tool, p, key); ok {
			return t, r
		}
		l.countFallback(tool, p)
	}
	var taken *rate.Reservation // the principal's token, returned if the tool refuses
	if p != nil && p.bucket != nil {
		r := p.bucket.ReserveN(now, 1)
		if d := r.DelayFrom(now); !r.OK() || d > 0 {
			r.CancelAt(now)
			return Ticket{}, &Refusal{Limit: "limits.principals." + key + ".callsPerSecond", RetryAfter: wait(p.bucket, now)}
		}
		taken = r
	}
	if p != nil && p.concurrent > 0 {
		if p.running.Add(1) > p.concurrent {
			p.running.Add(-1)
			if taken != nil {
				taken.CancelAt(now)
			}
			return Ticket{}, &Refusal{Limit: "limits.principals." + key + ".concurrent", RetryAfter: concurrentRetry}
		}
	}
	if b := l.tools[tool]; b != nil {
		if r := b.ReserveN(now, 1); !r.OK() || r.DelayFrom(now) > 0 {
			r.CancelAt(now)
			t := Ticket{p: p}
			t.Release()
			if taken != nil {
				taken.CancelAt(now)
			}
			return Ticket{}, &Refusal{Limit: "limits.tools." + tool + ".callsPerSecond", RetryAfter: wait(b, now)}
		}
	}
	return Ticket{p: p}, nil
}

// principal finds (or makes) the state of a caller, and the config key its
// limits came from. Each principal has its own buckets, "*" included: the
// wildcard is a per-principal limit, not one shared by all of them.
func (l *Limiter) principal(who string) (*principal, string) {
	r, ok := l.named[who]
	key := who
	if !ok {
		if l.star == nil {
			return nil, ""
		}
		r, key = *l.star, Wildcard
	}
	if v, ok := l.principals.Load(who); ok {
		return v.(*principal), key
	}
	p := &principal{cps: r.CallsPerSecond, burst: r.Burst, concurrent: int64(r.Concurrent)}
	if r.CallsPerSecond > 0 {
		p.bucket = rate.NewLimiter(rate.Limit(r.CallsPerSecond), r.Burst)
	}
	v, _ := l.principals.LoadOrStore(who, p)
	return v.(*principal), key
}

// wait is how long until the bucket holds one token again.
func wait(b *rate.Limiter, now time.Time) time.Duration {
	missing := 1 - b.TokensAt(now)
	if missing <= 0 {
		return time.Millisecond
	}
	secs := missing / float64(b.Limit())
	return time.Duration(math.Ceil(secs * float64(time.Second)))
}
