package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultReloadWait is how long the replica that was asked to reload waits
// for the others' answers.
const DefaultReloadWait = 10 * time.Second

// ReloadFunc reloads this replica's config, returning the registry
// revision it serves afterwards.
type ReloadFunc func(ctx context.Context) (revision uint64, err error)

// ReplicaReload is one replica's answer to a reload.
type ReplicaReload struct {
	Replica  string `json:"replica"`
	Applied  bool   `json:"applied"`
	Error    string `json:"error,omitempty"`
	Revision uint64 `json:"revision,omitempty"`
}

type reloadRequest struct {
	ID     string `json:"id"`
	Origin string `json:"origin"`
}

// ServeReloads makes this replica apply every reload another replica
// broadcasts (on the channel <prefix>reload), answering on the request's
// own channel. It returns once subscribed, or with the reason Redis did
// not confirm it (the subscription then starts when Redis returns).
// Close ends it.
func (c *Client) ServeReloads(apply ReloadFunc) error {
	c.servesReloads.Store(true)
	_, err := c.Subscribe(c.Key("reload"), func(ctx context.Context, payload string) { c.answerReload(ctx, payload, apply) })
	return err
}

// answerReload applies one broadcast reload and says how it went. The
// reload gets a deadline (nine tenths of DefaultReloadWait, so the answer
// arrives before the asking replica stops waiting): one that has not finished by then is
// answered as failed, saying so, and runs on by itself (Close waits for
// it), so one stuck reload does not keep this replica from hearing the
// next broadcast.
func (c *Client) answerReload(ctx context.Context, payload string, apply ReloadFunc) {
	var req reloadRequest
	if err := json.Unmarshal([]byte(payload), &req); err != nil || req.ID == "" {
		c.log.Warn("cluster: ignoring a malformed reload request", "error", err)
		return
	}
	if req.Origin == c.replica {
		return // the origin reloaded before it asked the others
	}
	c.log.Info("cluster: reloading, as replica " + req.Origin + " asked")
	ans := ReplicaReload{Replica: c.replica}
	actx, cancel := context.WithTimeout(ctx, c.reloadDeadline)
	defer cancel()
	type outcome struct {
		rev uint64
		err error
	}
	done := make(chan outcome, 1)
	c.wg.Add(1) // before Close's Wait: Close ends this subscription first
	go func() {
		defer c.wg.Done()
		rev, err := apply(actx)
		done <- outcome{rev, err}
	}()
	select {
	case o := <-done:
		if o.err != nil {
			ans.Error = o.err.Error()
		} else {
			ans.Applied, ans.Revision = true, o.rev
		}
	case <-actx.Done():
		ans.Error = fmt.Sprintf("the reload did not finish within %s (it goes on; see this replica's log)", c.reloadDeadline)
		c.log.Warn("cluster: a reload another replica asked for did not finish in time; it goes on", "origin", req.Origin, "deadline", c.reloadDeadline)
	}
	b, _ := json.Marshal(ans) // plain fields: cannot fail
	pctx, pcancel := context.WithTimeout(context.WithoutCancel(ctx), max(c.cfg.Timeout, time.Second))
	defer pcancel()
	if err := c.rdb.Publish(pctx, c.Key("reload:"+req.ID), b).Err(); err != nil {
		c.log.Warn("cluster: could not answer a reload", "origin", req.Origin, "error", err)
	}
}

// BroadcastReload asks every other replica to reload and collects their
// answers for up to wait (DefaultReloadWait when 0). The result has one
// entry per other live replica: those that did not answer in time are
// listed as failed, saying so. Call it after this replica reloaded.
func (c *Client) BroadcastReload(ctx context.Context, wait time.Duration) ([]ReplicaReload, error) {
	if wait <= 0 {
		wait = DefaultReloadWait
	}
	id := newReloadID()
	opCtx, cancel := context.WithTimeout(ctx, max(c.cfg.Timeout, time.Second))
	defer cancel()
	replies := c.rdb.Subscribe(opCtx, c.Key("reload:"+id))
	defer replies.Close()
	if _, err := replies.Receive(opCtx); err != nil {
		return nil, fmt.Errorf("cannot reach Redis to reach the other replicas: %w", err)
	}
	live, err := c.LiveReplicas(opCtx)
	if err != nil {
		return nil, fmt.Errorf("cannot reach Redis to reach the other replicas: %w", err)
	}
	req, _ := json.Marshal(reloadRequest{ID: id, Origin: c.replica})
	heard, err := c.rdb.Publish(opCtx, c.Key("reload"), req).Result()
	if err != nil {
		return nil, fmt.Errorf("cannot reach Redis to reach the other replicas: %w", err)
	}
	others := int(heard)
	if c.servesReloads.Load() {
		others-- // this replica hears its own request too
	}
	// Wait for every live replica, even one whose subscription is being
	// restored right now; it is named as silent if it never answers.
	if n := len(live) - 1; slices.Contains(live, c.replica) && others < n {
		others = n
	}
	answers := collectReloads(ctx, replies.Channel(), others, wait)
	return c.withSilent(answers, live, wait), nil
}

// collectReloads reads up to n answers until wait ends.
func collectReloads(ctx context.Context, ch <-chan *redis.Message, n int, wait time.Duration) []ReplicaReload {
	var out []ReplicaReload
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for len(out) < n {
		select {
		case <-ctx.Done():
			return out
		case <-timer.C:
			return out
		case m, ok := <-ch:
			if !ok {
				return out
			}
			var a ReplicaReload
			if json.Unmarshal([]byte(m.Payload), &a) == nil && a.Replica != "" {
				out = append(out, a)
			}
		}
	}
	return out
}

// withSilent adds, as failed, the live replicas that did not answer.
func (c *Client) withSilent(answers []ReplicaReload, live []string, wait time.Duration) []ReplicaReload {
	for _, id := range live {
		if id == c.replica || slices.ContainsFunc(answers, func(a ReplicaReload) bool { return a.Replica == id }) {
			continue
		}
		answers = append(answers, ReplicaReload{Replica: id,
			Error: fmt.Sprintf("did not answer within %s (not subscribed, stuck, or gone without leaving the list)", wait)})
	}
	slices.SortFunc(answers, func(a, b ReplicaReload) int {
		switch {
		case a.Replica < b.Replica:
			return -1
		case a.Replica > b.Replica:
			return 1
		}
		return 0
	})
	return answers
}

func newReloadID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // crypto/rand never fails on Linux
	return hex.EncodeToString(b)
}
