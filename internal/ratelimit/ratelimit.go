// Package ratelimit refuses calls over limits.principals (calls per second,
// burst, calls at once per principal) and limits.tools.NAME.callsPerSecond
// (per tool, across callers), with how long to wait before retrying.
//
// A Limiter is built per config and swapped whole on reload (buckets in
// memory start full again). The call rates are counted by a Rates (rates.go):
// this process's own buckets (Memory), or with WithCluster (cluster.redis)
// buckets every replica shares (Redis, redis.go): one atomic round trip per
// call that has a rate, none for a call without one, and this process's
// own buckets while Redis cannot be asked. The concurrent caps count the
// calls running in this process, on one replica or many.
package ratelimit

import (
	"context"
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

// Limiter holds the limits of one config.
type Limiter struct {
	named map[string]config.PrincipalRate
	star  *config.PrincipalRate
	// toolRates are the tools' rates.
	toolRates map[string]config.Rate
	// rates counts the call rates; local is this process's own buckets,
	// which decide when rates cannot be asked (the same as rates with
	// one replica).
	rates Rates
	local *Memory
	// inMemory is set when rates is local: the buckets are then found
	// once (principal.bucket, tools) instead of by name on every call.
	inMemory bool
	tools    map[string]*rate.Limiter
	// principals are the callers' states, made on first call.
	principals sync.Map // string → *principal
}

type principal struct {
	rate       config.Rate   // CallsPerSecond 0 = no rate
	bucket     *rate.Limiter // its bucket in local (in memory only)
	concurrent int64         // 0 = no cap
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

// Option changes how New builds a Limiter.
type Option func(*Limiter)

// WithRates counts the call rates in r instead of this process's memory.
func WithRates(r Rates) Option {
	return func(l *Limiter) {
		if r != nil {
			l.rates = r
		}
	}
}

// New builds the limiter of cfg, or nil when no limit is set.
func New(cfg config.RateLimits, opts ...Option) *Limiter {
	if !cfg.Enabled() {
		return nil
	}
	l := &Limiter{named: cfg.Principals, toolRates: cfg.Tools, local: NewMemory()}
	l.rates = l.local
	for _, o := range opts {
		o(l)
	}
	if l.inMemory = l.rates == Rates(l.local); l.inMemory {
		l.tools = make(map[string]*rate.Limiter, len(cfg.Tools))
		for name, r := range cfg.Tools {
			l.tools[name] = bucketOf(&l.local.tools, Bucket{Name: name, Rate: r})
		}
	}
	if r, ok := cfg.Principals[Wildcard]; ok {
		l.star = &r
	}
	return l
}

// Admit takes one call of principal to tool, or says why not. The
// principal's limits are checked first (its concurrent cap, then its
// rate), then the tool's shared bucket, and a refused call is charged
// nothing: a caller over its own limit does not spend the tool's tokens,
// which other callers share. ctx bounds a shared store's round trip. A
// nil Limiter admits everything.
func (l *Limiter) Admit(ctx context.Context, who, tool string, now time.Time) (Ticket, *Refusal) {
	if l == nil {
		return Ticket{}, nil
	}
	p, key := l.principal(who)
	t := Ticket{p: p}
	if p != nil && p.concurrent > 0 && p.running.Add(1) > p.concurrent {
		p.running.Add(-1)
		return Ticket{}, &Refusal{Limit: "limits.principals." + key + ".concurrent", RetryAfter: concurrentRetry}
	}
	by, retry := l.take(ctx, now, who, tool, p)
	if by == Admitted {
		return t, nil
	}
	t.Release()
	limit := "limits.tools." + tool + ".callsPerSecond"
	if by == ByPrincipal {
		limit = "limits.principals." + key + ".callsPerSecond"
	}
	return Ticket{}, &Refusal{Limit: limit, RetryAfter: max(retry, time.Millisecond)}
}

// take counts the call against the rates that apply to it: in memory on
// the buckets found before, else in rates, and while rates cannot be
// asked on this process's own buckets. A call no rate applies to counts
// nowhere (no round trip).
func (l *Limiter) take(ctx context.Context, now time.Time, who, tool string, p *principal) (Refuser, time.Duration) {
	if l.inMemory {
		return takeFrom(now, p.memBucket(), l.tools[tool])
	}
	var pb, tb Bucket
	if p != nil && p.rate.CallsPerSecond > 0 {
		pb = Bucket{Name: who, Rate: p.rate}
	}
	if r, ok := l.toolRates[tool]; ok {
		tb = Bucket{Name: tool, Rate: r}
	}
	if pb.Name == "" && tb.Name == "" {
		return Admitted, 0
	}
	by, retry, err := l.rates.Take(ctx, now, pb, tb)
	if err != nil {
		by, retry, _ = l.local.Take(ctx, now, pb, tb) // Memory never fails
	}
	return by, retry
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
	p := &principal{rate: r.Rate, concurrent: int64(r.Concurrent)}
	if l.inMemory && r.CallsPerSecond > 0 {
		p.bucket = bucketOf(&l.local.principals, Bucket{Name: who, Rate: r.Rate})
	}
	v, _ := l.principals.LoadOrStore(who, p)
	return v.(*principal), key
}

// memBucket is p's bucket in memory; nil for no principal.
func (p *principal) memBucket() *rate.Limiter {
	if p == nil {
		return nil
	}
	return p.bucket
}
