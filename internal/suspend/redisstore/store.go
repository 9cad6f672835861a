// Package redisstore is the suspended-call store every replica shares
// (cluster.redis): suspend.Store on Redis, passing the same contract
// (suspendtest) as the in-memory store.
package redisstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolnexus/toolnexus/internal/cluster"
	"github.com/toolnexus/toolnexus/internal/suspend"
)

// The suspend package's vocabulary, used unqualified below.
type (
	Store      = suspend.Store
	Entry      = suspend.Entry
	Request    = suspend.Request
	Resolution = suspend.Resolution
	Binding    = suspend.Binding
	Filter     = suspend.Filter
	Kind       = suspend.Kind
	State      = suspend.State
	CapError   = suspend.CapError
)

// ErrUnavailable refuses every operation while the shared store cannot
// be reached: a call that needs an approval or an answer fails closed.
var ErrUnavailable = errors.New("the shared store of suspended calls (cluster.redis) cannot be reached, so calls that need an approval or an answer are refused until it is back; retry later")

// redisHistory is how long an entry stays readable after it can no
// longer be answered, so a late answer is told what happened.
const redisHistory = time.Hour

// redisPoll bounds a Wait between checks, in case a wake-up was lost
// while the subscription reconnected.
const redisPoll = 2 * time.Second

// Store is the suspend.Store every replica shares (cluster.redis): each entry is a
// hash, each state change one Lua script run atomically on the server,
// on Redis's clock; caps count the pending entries of every replica;
// a resolution is published so a call waiting on any replica wakes at
// once. All keys carry the hash tag {sus}: on a Redis Cluster they live
// in one slot, as the scripts need.
type Redis struct {
	c *cluster.Client

	mu      sync.Mutex
	waiters map[string]map[chan struct{}]struct{}

	stop chan struct{}
	done chan struct{}
}

var _ Store = (*Redis)(nil)

// New is the shared store on c. Close ends its subscription.
func New(c *cluster.Client) *Redis {
	r := &Redis{c: c, waiters: map[string]map[chan struct{}]struct{}{}, stop: make(chan struct{}), done: make(chan struct{})}
	ctx, cancel := context.WithTimeout(context.Background(), max(c.Timeout(), time.Second))
	ps := c.Redis().Subscribe(ctx, r.key("done"))
	_, _ = ps.Receive(ctx) // confirmation; an error means Redis is down: go-redis resubscribes when it returns
	cancel()
	go r.dispatch(ps)
	return r
}

// Close ends the subscription that wakes waiters.
func (r *Redis) Close() {
	close(r.stop)
	<-r.done
}

func (r *Redis) key(name string) string { return r.c.Key("{sus}:" + name) }

// dispatch wakes the local waiters of every id resolved anywhere.
func (r *Redis) dispatch(ps *redis.PubSub) {
	defer close(r.done)
	defer ps.Close()
	msgs := ps.Channel()
	for {
		select {
		case <-r.stop:
			return
		case m, ok := <-msgs:
			if !ok {
				return
			}
			r.wake(m.Payload)
		}
	}
}

func (r *Redis) wake(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for ch := range r.waiters[id] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

func (r *Redis) listen(id string) (chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	r.mu.Lock()
	if r.waiters[id] == nil {
		r.waiters[id] = map[chan struct{}]struct{}{}
	}
	r.waiters[id][ch] = struct{}{}
	r.mu.Unlock()
	return ch, func() {
		r.mu.Lock()
		delete(r.waiters[id], ch)
		if len(r.waiters[id]) == 0 {
			delete(r.waiters, id)
		}
		r.mu.Unlock()
	}
}

// run runs a script, failing closed while Redis is away.
func (r *Redis) run(ctx context.Context, s *redis.Script, keys []string, args ...any) ([]any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !r.c.Up() {
		r.c.Metrics().Fallback(cluster.FallbackApproval)
		return nil, ErrUnavailable
	}
	opCtx, cancel := context.WithTimeout(ctx, r.c.Timeout())
	defer cancel()
	res, err := s.Run(opCtx, r.c.Redis(), keys, args...).Slice()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err() // the caller went away, not Redis
		}
		if cluster.Unreachable(err) {
			r.c.Failed(err)
			r.c.Metrics().Fallback(cluster.FallbackApproval)
			return nil, fmt.Errorf("%w (%v)", ErrUnavailable, err)
		}
		return nil, fmt.Errorf("suspend: Redis: %w", err)
	}
	return res, nil
}

// openKey names the open entry of one kind and binding, for Reuse.
func (r *Redis) openKey(k Kind, b Binding) string {
	h := sha256.Sum256([]byte(string(k) + "\x00" + b.Principal + "\x00" + b.Session + "\x00" + b.Tool + "\x00" + b.Digest))
	return r.key("open:" + hex.EncodeToString(h[:16]))
}

// Create implements Store.
func (r *Redis) Create(ctx context.Context, q Request) (Entry, error) {
	if err := validate(q); err != nil {
		return Entry{}, err
	}
	id, err := suspend.NewID(q.Kind)
	if err != nil {
		return Entry{}, err
	}
	reuse := "0"
	if q.Reuse {
		reuse = "1"
	}
	keys := []string{r.key("e:" + id), r.openKey(q.Kind, q.Binding), r.key("pending:" + string(q.Kind)),
		r.key("pending:" + string(q.Kind) + ":" + q.Principal), r.key("all"), r.key("seq")}
	res, err := r.run(ctx, createScript, keys, id, string(q.Kind), q.Principal, q.Session, q.Tool, q.Digest,
		q.TTL.Milliseconds(), q.MaxPerPrincipal, q.MaxTotal, reuse, q.Data, redisHistory.Milliseconds(), r.key(""))
	if err != nil {
		return Entry{}, err
	}
	switch status(res) {
	case "capwho":
		return Entry{}, &CapError{Kind: q.Kind, Principal: q.Principal, Max: q.MaxPerPrincipal}
	case "captotal":
		return Entry{}, &CapError{Kind: q.Kind, Max: q.MaxTotal}
	case "reused":
		e, err := entryFrom(res[1:])
		e.Reused = true
		return e, err
	}
	return entryFrom(res[1:])
}

// Get implements Store.
func (r *Redis) Get(ctx context.Context, id string) (Entry, error) {
	res, err := r.run(ctx, touchScript, []string{r.key("e:" + id)}, r.key(""))
	if err != nil {
		return Entry{}, err
	}
	if status(res) == "unknown" {
		return Entry{}, suspend.ErrUnknown
	}
	return entryFrom(res[1:])
}

// Resolve implements Store.
func (r *Redis) Resolve(ctx context.Context, id string, q Resolution) (Entry, error) {
	if err := validResolution(q); err != nil {
		return Entry{}, err
	}
	var req Binding
	require := "0"
	if q.Require != nil {
		require, req = "1", *q.Require
	}
	res, err := r.run(ctx, resolveScript, []string{r.key("e:" + id)}, r.key(""), string(q.To), q.By, q.Reason, q.Answer,
		require, req.Principal, req.Session, req.Tool, req.Digest)
	if err != nil {
		return Entry{}, err
	}
	st := status(res)
	if st == "unknown" {
		return Entry{}, suspend.ErrUnknown
	}
	e, perr := entryFrom(res[1:])
	if perr != nil {
		return Entry{}, perr
	}
	switch st {
	case "expired":
		return e, suspend.ErrExpired
	case "already":
		return e, suspend.ErrAlreadyAnswered
	case "mismatch":
		return e, suspend.ErrMismatch
	}
	return e, nil
}

// Claim implements Store.
func (r *Redis) Claim(ctx context.Context, id string, b Binding) (Entry, error) {
	res, err := r.run(ctx, claimScript, []string{r.key("e:" + id)}, r.key(""), b.Principal, b.Session, b.Tool, b.Digest)
	if err != nil {
		return Entry{}, err
	}
	st := status(res)
	switch st {
	case "unknown":
		return Entry{}, suspend.ErrUnknown
	case "mismatch":
		return Entry{}, suspend.ErrMismatch
	}
	e, perr := entryFrom(res[1:])
	if perr != nil {
		return Entry{}, perr
	}
	switch st {
	case "claimed":
		return e, suspend.ErrClaimed
	case "denied":
		return e, fmt.Errorf("%w by %s: %s", suspend.ErrDenied, e.By, orNone(e.Reason))
	case "expired":
		return e, suspend.ErrExpired
	case "notyet":
		return e, suspend.ErrNotYet
	case "already":
		return e, suspend.ErrAlreadyAnswered
	}
	return e, nil
}

// Wait implements Store: it wakes on the resolution's publication from
// any replica, at the entry's expiry, or every redisPoll in case a
// publication was missed.
func (r *Redis) Wait(ctx context.Context, id string) (Entry, error) {
	ch, stop := r.listen(id) // before the first read, so no wake-up falls between
	defer stop()
	for {
		e, err := r.Get(ctx, id)
		if err != nil {
			return Entry{}, err
		}
		if e.State != suspend.Pending {
			return e, nil
		}
		t := time.NewTimer(min(redisPoll, max(time.Millisecond, time.Until(e.ExpiresAt))))
		select {
		case <-ch:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return Entry{}, ctx.Err()
		}
		t.Stop()
	}
}

// List implements Store.
func (r *Redis) List(ctx context.Context, f Filter) ([]Entry, error) {
	res, err := r.run(ctx, listScript, []string{r.key("all")}, r.key(""))
	if err != nil {
		return nil, err
	}
	out := []Entry{}
	for _, item := range res {
		fields, _ := item.([]any)
		e, err := entryFrom(fields)
		if err != nil {
			return nil, err
		}
		if (f.Kind == "" || e.Kind == f.Kind) && (f.Principal == "" || e.Principal == f.Principal) && (!f.Open || e.Open()) {
			out = append(out, e)
		}
	}
	return out, nil
}

// Lookup implements Store: the open key of the kind and binding names the
// newest entry created for it.
func (r *Redis) Lookup(ctx context.Context, k Kind, b Binding) (Entry, error) {
	res, err := r.run(ctx, lookupScript, []string{r.openKey(k, b)}, r.key(""))
	if err != nil {
		return Entry{}, err
	}
	if status(res) == "unknown" {
		return Entry{}, suspend.ErrUnknown
	}
	return entryFrom(res[1:])
}

// Withdraw implements Store.
func (r *Redis) Withdraw(ctx context.Context, id string) (bool, error) {
	res, err := r.run(ctx, withdrawScript, []string{r.key("e:" + id)}, r.key(""), id)
	if err != nil {
		return false, err
	}
	return status(res) == "pending", nil
}

// validate is suspend's check of a new request (the same rules, the
// same errors).
func validate(r Request) error {
	switch {
	case r.Kind == "":
		return fmt.Errorf("%w: no kind", suspend.ErrInvalid)
	case r.TTL <= 0:
		return fmt.Errorf("%w: the time to live must be positive", suspend.ErrInvalid)
	case r.Tool == "":
		return fmt.Errorf("%w: no tool in the binding", suspend.ErrInvalid)
	}
	return nil
}

func validResolution(r Resolution) error {
	switch r.To {
	case suspend.Approved, suspend.Denied, suspend.Answered:
		return nil
	}
	return fmt.Errorf("%w: a resolution goes to approved, denied or answered, not %q", suspend.ErrInvalid, r.To)
}

func orNone(s string) string {
	if s == "" {
		return "no reason given"
	}
	return s
}

func status(res []any) string {
	if len(res) == 0 {
		return ""
	}
	s, _ := res[0].(string)
	return s
}

// entryFrom reads an entry from a hash's flattened field/value pairs.
func entryFrom(kv []any) (Entry, error) {
	if len(kv)%2 != 0 || len(kv) == 0 {
		return Entry{}, fmt.Errorf("suspend: Redis: malformed entry (%d fields)", len(kv))
	}
	var e Entry
	for i := 0; i < len(kv); i += 2 {
		k, _ := kv[i].(string)
		v, _ := kv[i+1].(string)
		switch k {
		case "id":
			e.ID = v
		case "kind":
			e.Kind = Kind(v)
		case "principal":
			e.Principal = v
		case "session":
			e.Session = v
		case "tool":
			e.Tool = v
		case "digest":
			e.Digest = v
		case "state":
			e.State = State(v)
		case "data":
			e.Data = bytesOrNil(v)
		case "answer":
			e.Answer = bytesOrNil(v)
		case "by":
			e.By = v
		case "reason":
			e.Reason = v
		case "created":
			e.CreatedAt = msTime(v)
		case "expires":
			e.ExpiresAt = msTime(v)
		case "resolved":
			e.ResolvedAt = msTime(v)
		}
	}
	return e, nil
}

func bytesOrNil(v string) []byte {
	if v == "" {
		return nil
	}
	return []byte(v)
}

func msTime(v string) time.Time {
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil || ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}
