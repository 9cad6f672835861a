package mcp

import "time"

// backoff paces restarts: the first waits initial, each further one twice
// as long up to max; a server that stayed up for resetAfter before it went
// down starts again from initial, so a crash after a day of service is
// retried at once while a crash loop slows down.
type backoff struct {
	initial, max, resetAfter time.Duration
	cur                      time.Duration
}

func newBackoff(r Restart) *backoff {
	r = r.withDefaults()
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	return &backoff{initial: ms(r.InitialBackoff), max: ms(r.MaxBackoff), resetAfter: ms(r.ResetAfter), cur: ms(r.InitialBackoff)}
}

// next is the wait before the coming attempt.
func (b *backoff) next() time.Duration {
	d := b.cur
	b.cur = min(b.cur*2, b.max)
	return d
}

// wentDown records that the server died after being up for upFor.
func (b *backoff) wentDown(upFor time.Duration) {
	if upFor >= b.resetAfter {
		b.cur = b.initial
	}
}
