package ratelimit

import (
	"context"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/toolnexus/toolnexus/internal/config"
)

// Rates keeps the call-rate buckets: where a rate is counted is the one
// thing that changes between one replica and many. Two implementations
// pass the same contract (package ratelimittest): Memory, this process's
// own buckets, and Redis (redis.go), one set of buckets every replica
// shares. The concurrent caps are not here: they count the calls running
// in this process, and stay with the Limiter.
type Rates interface {
	// Take takes one call from the principal's bucket and the tool's, all
	// or none; a Bucket with no Name is not there. The principal's is
	// asked first, so a caller over its own rate spends none of the
	// tool's tokens, which other callers share. It returns Admitted, or
	// which bucket refused and how long until it would admit one call.
	// An error means the buckets could not be asked (the Limiter then
	// decides on this process's own). now is the caller's clock; a store
	// shared by replicas keeps its own.
	Take(ctx context.Context, now time.Time, principal, tool Bucket) (Refuser, time.Duration, error)
}

// Bucket is one rate: a principal's (Name is the principal, every
// principal its own bucket, "*" included) or a tool's (Name is the tool).
type Bucket struct {
	Name string
	config.Rate
}

// Refuser says which bucket refused a Take.
type Refuser int

// Take's verdicts.
const (
	Admitted Refuser = iota
	ByPrincipal
	ByTool
)

// Memory is Rates in this process: golang.org/x/time/rate buckets, made
// on first use. Finding one is a sync.Map read; a bucket's short mutex
// is shared only by the callers of one principal (or one tool).
type Memory struct {
	principals sync.Map // name → *rate.Limiter
	tools      sync.Map // name → *rate.Limiter
}

// NewMemory makes empty buckets; each starts full on its first call.
func NewMemory() *Memory { return &Memory{} }

var _ Rates = (*Memory)(nil)

// Take implements Rates; it never fails.
func (m *Memory) Take(_ context.Context, now time.Time, principal, tool Bucket) (Refuser, time.Duration, error) {
	var pb, tb *rate.Limiter
	if principal.Name != "" {
		pb = bucketOf(&m.principals, principal)
	}
	if tool.Name != "" {
		tb = bucketOf(&m.tools, tool)
	}
	by, retry := takeFrom(now, pb, tb)
	return by, retry, nil
}

// takeFrom is Take on buckets already found (nil: none). The Limiter
// keeps its principals' and tools' buckets found, when they are in
// memory, so a call pays no look-up by name.
func takeFrom(now time.Time, principal, tool *rate.Limiter) (Refuser, time.Duration) {
	var taken *rate.Reservation // the principal's token, returned if the tool refuses
	if principal != nil {
		r := principal.ReserveN(now, 1)
		if !r.OK() || r.DelayFrom(now) > 0 {
			r.CancelAt(now)
			return ByPrincipal, wait(principal, now)
		}
		taken = r
	}
	if tool != nil {
		if r := tool.ReserveN(now, 1); !r.OK() || r.DelayFrom(now) > 0 {
			r.CancelAt(now)
			if taken != nil {
				taken.CancelAt(now)
			}
			return ByTool, wait(tool, now)
		}
	}
	return Admitted, 0
}

// bucketOf finds (or makes, full) the bucket of b in m.
func bucketOf(m *sync.Map, b Bucket) *rate.Limiter {
	if v, ok := m.Load(b.Name); ok {
		return v.(*rate.Limiter)
	}
	v, _ := m.LoadOrStore(b.Name, rate.NewLimiter(rate.Limit(b.CallsPerSecond), b.Burst))
	return v.(*rate.Limiter)
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
