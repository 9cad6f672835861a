package cluster

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Subscription is one channel this replica listens on, with the one
// goroutine that hands its messages over. Close (or the Client's) ends
// the goroutine and waits for it.
type Subscription struct {
	channel string
	cancel  context.CancelFunc
	done    chan struct{}
	once    sync.Once
}

// Subscribe listens on channel (a name the caller prefixed with Key) and
// calls handle with each message, in order, on a goroutine of its own;
// handle's ctx ends when the subscription closes. It returns once Redis
// confirmed the subscription, or with the reason it did not within
// cluster.redis.timeout (at least 1 s): Redis is down or slow. The
// subscription stands either way — go-redis subscribes again when it
// reconnects — but messages published before then are not heard, which
// the caller may want to say.
func (c *Client) Subscribe(channel string, handle func(ctx context.Context, payload string)) (*Subscription, error) {
	ctx, cancel := context.WithCancel(context.Background())
	s := &Subscription{channel: channel, cancel: cancel, done: make(chan struct{})}
	cctx, ccancel := context.WithTimeout(ctx, max(c.cfg.Timeout, time.Second))
	ps := c.rdb.Subscribe(cctx, channel)
	_, err := ps.Receive(cctx) // the confirmation
	ccancel()
	if err != nil {
		err = fmt.Errorf("cluster: Redis did not confirm the subscription to %s (it is down or slow; go-redis subscribes again once it answers): %w", channel, err)
	}
	msgs := ps.Channel()
	go func() {
		defer close(s.done)
		defer ps.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case m, ok := <-msgs:
				if !ok {
					return
				}
				handle(ctx, m.Payload)
			}
		}
	}()
	c.subsMu.Lock()
	if c.closed {
		c.subsMu.Unlock()
		s.Close()
		return s, errClosed
	}
	c.subs = append(c.subs, s)
	c.subsMu.Unlock()
	return s, err
}

// Close ends the subscription: handle's ctx ends, and Close returns once
// its goroutine has.
func (s *Subscription) Close() {
	s.once.Do(func() {
		s.cancel()
		<-s.done
	})
}
