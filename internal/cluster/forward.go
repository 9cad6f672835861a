package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolnexus/toolnexus/internal/suspend/pending"
)

// Forwarding carries an answer to the replica that holds its pending
// request (the one whose live upstream connection asked it) and brings
// the result back. Each replica subscribes to one channel of its own,
// <prefix>fwd:<replica id>; a request and its reply are both messages on
// the receiver's channel. PUBLISH returns how many subscribers got the
// message, so a replica that is gone (killed: Redis dropped its
// subscription with its connection) is known at once, with no heartbeat
// to wait out; while a forwarded answer runs, the sender asks Redis every
// ownerCheckInterval whether the owner is still subscribed, so an owner
// killed mid-call is known within that interval too.

// With Redis Cluster a PUBLISH and PUBSUB NUMSUB count only the
// subscribers on the node asked, so there the owner counts as gone when
// its heartbeat lapses (LiveReplicas) instead: slower to notice, never
// wrong.

// ownerCheckInterval is how often a waiting sender checks that the owner
// still listens.
const ownerCheckInterval = 200 * time.Millisecond

// ErrReplicaGone: the replica holding the request no longer listens. It
// is pending.ErrOwnerGone (errors.Is holds), so the Client is the pending
// store's Remote as it is.
var ErrReplicaGone error = replicaGone{}

type replicaGone struct{}

func (replicaGone) Error() string {
	return "the replica holding this pending request is gone (it stopped or was killed), and its upstream request went with it; call the tool again"
}

func (replicaGone) Is(target error) bool { return target == pending.ErrOwnerGone }

// The Client carries forwarded answers between replicas for the pending
// store, which runs the same contract (pendingtest.RunForwarding) on it
// and on pending.Hub.
var _ pending.Remote = (*Client)(nil)

// ForwardFunc serves one forwarded request on the owning replica and
// returns the reply.
type ForwardFunc = func(ctx context.Context, req []byte) []byte

type forwardMsg struct {
	Ask  bool            `json:"ask,omitempty"` // a request; else a reply
	ID   string          `json:"id"`
	From string          `json:"from"`
	Body json.RawMessage `json:"body"`
}

// forwarding is the Client's side of forwarding, set by ServeForwards.
type forwarding struct {
	seq   atomic.Uint64
	mu    sync.Mutex
	waits map[string]chan []byte
}

// ServeForwards subscribes this replica to its forwarding channel and
// serves each forwarded request with serve, each on a goroutine of its
// own whose ctx ends when the Client closes (Close waits for them). It
// returns once subscribed, or with the reason Redis did not confirm it
// (the subscription then starts when Redis returns). A replica forwards
// nothing before it serves: replies come back on its own channel.
func (c *Client) ServeForwards(serve ForwardFunc) error {
	c.fwd = &forwarding{waits: map[string]chan []byte{}}
	_, err := c.Subscribe(c.forwardChannel(c.replica), func(ctx context.Context, payload string) { c.forwarded(ctx, payload, serve) })
	return err
}

// forwarded handles one message on this replica's channel.
func (c *Client) forwarded(ctx context.Context, payload string, serve ForwardFunc) {
	var m forwardMsg
	if err := json.Unmarshal([]byte(payload), &m); err != nil || m.ID == "" {
		c.log.Warn("cluster: ignoring a malformed forwarded message", "error", err)
		return
	}
	if !m.Ask {
		c.fwd.mu.Lock()
		ch := c.fwd.waits[m.ID]
		delete(c.fwd.waits, m.ID)
		c.fwd.mu.Unlock()
		if ch != nil {
			ch <- m.Body // buffered: the waiter may have given up
		}
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		reply := serve(ctx, m.Body)
		b, _ := json.Marshal(forwardMsg{ID: m.ID, From: c.replica, Body: reply}) // raw JSON: cannot fail
		// The reply goes out even when ctx ended (the Client closing):
		// the asking replica is waiting for it.
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), max(c.cfg.Timeout, time.Second))
		defer cancel()
		if n, err := c.rdb.Publish(pctx, c.forwardChannel(m.From), b).Result(); err != nil || n == 0 {
			c.log.Warn("cluster: the replica that forwarded an answer did not get its result (gone, or Redis unreachable)", "replica", m.From, "error", err)
		}
	}()
}

// Forward sends req to the replica owner and waits for its reply, until
// ctx ends. It fails with ErrReplicaGone as soon as owner is found not
// listening (before or during the call), and with another error when
// Redis cannot be reached.
func (c *Client) Forward(ctx context.Context, owner string, req []byte) ([]byte, error) {
	if c == nil || c.fwd == nil {
		return nil, errors.New("cluster: this replica does not forward answers")
	}
	id := c.replica + "-" + strconv.FormatUint(c.fwd.seq.Add(1), 36)
	ch := make(chan []byte, 1)
	c.fwd.mu.Lock()
	c.fwd.waits[id] = ch
	c.fwd.mu.Unlock()
	defer func() {
		c.fwd.mu.Lock()
		delete(c.fwd.waits, id)
		c.fwd.mu.Unlock()
	}()
	b, err := json.Marshal(forwardMsg{Ask: true, ID: id, From: c.replica, Body: req})
	if err != nil {
		return nil, fmt.Errorf("cluster: forwarded request: %w", err)
	}
	ch2 := c.forwardChannel(owner)
	n, err := c.op(ctx, func(ctx context.Context) (int64, error) { return c.rdb.Publish(ctx, ch2, b).Result() })
	if err != nil {
		return nil, err
	}
	_, sharded := c.rdb.(*redis.ClusterClient)
	if n == 0 && !sharded {
		return nil, ErrReplicaGone
	}
	t := time.NewTicker(ownerCheckInterval)
	defer t.Stop()
	for {
		select {
		case reply := <-ch:
			return reply, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-t.C:
			gone, err := c.ownerGone(ctx, owner, ch2, sharded)
			if gone {
				return nil, ErrReplicaGone
			}
			if err != nil && !c.Up() { // the reply could not reach us either
				return nil, fmt.Errorf("cluster: Redis became unreachable while the owner ran the answer: %w", err)
			}
		}
	}
}

// ownerGone reports whether owner no longer listens on its channel; a
// check Redis did not answer is not taken for gone.
func (c *Client) ownerGone(ctx context.Context, owner, channel string, sharded bool) (bool, error) {
	if sharded {
		live, err := c.LiveReplicas(ctx)
		return err == nil && !slices.Contains(live, owner), err
	}
	subs, err := c.op(ctx, func(ctx context.Context) (int64, error) {
		m, err := c.rdb.PubSubNumSub(ctx, channel).Result()
		return m[channel], err
	})
	return err == nil && subs == 0, err
}

// op runs one Redis operation under cluster.redis.timeout, telling the
// client when Redis cannot be reached.
func (c *Client) op(ctx context.Context, f func(context.Context) (int64, error)) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	n, err := f(ctx)
	if err != nil && ctx.Err() == nil {
		c.Failed(err)
	}
	return n, err
}

func (c *Client) forwardChannel(replica string) string { return c.Key("fwd:" + replica) }
