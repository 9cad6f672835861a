// Package redisvault keeps the vault's sealed records in Redis
// (cluster.redis), so every replica reads the connection a caller made on
// any of them. It passes the same contract (vaulttest) as the in-memory
// and directory backends.
//
// Every key carries the hash tag {vault}, so on a Redis Cluster they live
// in one slot and a write and its index entry go in one transaction.
// Changes are published on <prefix>{vault}:changed, which each replica's
// Watch subscribes to (its token cache forgets a caller disconnected
// elsewhere at once).
package redisvault

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/toolnexus/toolnexus/internal/cluster"
	"github.com/toolnexus/toolnexus/internal/vault"
)

// ErrUnavailable is every operation while Redis cannot be reached. Its
// text is written for a caller: it ends in the PENDING or is_error result
// of a call to an OAuth upstream.
var ErrUnavailable = errors.New("the shared credential store (cluster.redis) cannot be reached, so connections to OAuth upstreams cannot be read or saved until it is back; retry later")

// Redis is the vault backend on the replicas' Redis.
type Redis struct {
	c *cluster.Client

	mu       sync.Mutex
	watchers map[int]func(string)
	next     int
	sub      *redis.PubSub // open while anyone watches
	subDone  chan struct{}
}

var _ vault.Backend = (*Redis)(nil)

// New is the backend on c. Close ends its subscription (c stays open).
func New(c *cluster.Client) *Redis { return &Redis{c: c, watchers: map[int]func(string){}} }

func (r *Redis) key(name string) string { return r.c.Key("{vault}:" + name) }
func (r *Redis) index() string          { return r.c.Key("{vault}:index") }
func (r *Redis) channel() string        { return r.c.Key("{vault}:changed") }

// failed turns a Redis error into ErrUnavailable (and tells the client,
// so other stores stop waiting on it too); other errors pass.
func (r *Redis) failed(err error) error {
	if err == nil || errors.Is(err, redis.Nil) {
		return err
	}
	if cluster.Unreachable(err) {
		r.c.Failed(err)
		return ErrUnavailable
	}
	return err
}

func (r *Redis) Put(ctx context.Context, key string, rec []byte, ttl time.Duration) error {
	_, err := r.c.Redis().TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, r.key(key), rec, max(ttl, 0))
		p.SAdd(ctx, r.index(), key)
		p.Publish(ctx, r.channel(), key)
		return nil
	})
	return r.failed(err)
}

func (r *Redis) Get(ctx context.Context, key string) ([]byte, error) {
	b, err := r.c.Redis().Get(ctx, r.key(key)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, vault.ErrNotFound
	}
	return b, r.failed(err)
}

// takeScript is GETDEL with the index and the change feed in the same
// atomic step (GETDEL alone needs Redis 6.2; this runs on any).
var takeScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if not v then return false end
redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[1])
redis.call('PUBLISH', ARGV[2], ARGV[1])
return v`)

func (r *Redis) Take(ctx context.Context, key string) ([]byte, error) {
	v, err := takeScript.Run(ctx, r.c.Redis(), []string{r.key(key), r.index()}, key, r.channel()).Text()
	if errors.Is(err, redis.Nil) {
		return nil, vault.ErrNotFound
	}
	if err != nil {
		return nil, r.failed(err)
	}
	return []byte(v), nil
}

func (r *Redis) Delete(ctx context.Context, key string) (bool, error) {
	var del *redis.IntCmd
	_, err := r.c.Redis().TxPipelined(ctx, func(p redis.Pipeliner) error {
		del = p.Del(ctx, r.key(key))
		p.SRem(ctx, r.index(), key)
		p.Publish(ctx, r.channel(), key)
		return nil
	})
	if err != nil {
		return false, r.failed(err)
	}
	return del.Val() > 0, nil
}

// Keys reads the index and drops from it the records that expired.
func (r *Redis) Keys(ctx context.Context, prefix string) ([]string, error) {
	all, err := r.c.Redis().SMembers(ctx, r.index()).Result()
	if err != nil {
		return nil, r.failed(err)
	}
	var names []string
	for _, k := range all {
		if strings.HasPrefix(k, prefix) {
			names = append(names, k)
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	exists := make([]*redis.IntCmd, len(names))
	if _, err := r.c.Redis().Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range names {
			exists[i] = p.Exists(ctx, r.key(k))
		}
		return nil
	}); err != nil {
		return nil, r.failed(err)
	}
	out := names[:0]
	var gone []any
	for i, k := range names {
		if exists[i].Val() > 0 {
			out = append(out, k)
		} else {
			gone = append(gone, k)
		}
	}
	if len(gone) > 0 {
		_ = r.c.Redis().SRem(ctx, r.index(), gone...).Err() // tidying only
	}
	return out, nil
}

var unlockScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`)

func (r *Redis) Lock(ctx context.Context, name string, ttl time.Duration) (func(), error) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	k := r.key("lock:" + name)
	ok, err := r.c.Redis().SetNX(ctx, k, token, ttl).Result()
	if err != nil {
		return nil, r.failed(err)
	}
	if !ok {
		return nil, vault.ErrLocked
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), max(r.c.Timeout(), time.Second))
		defer cancel()
		_ = unlockScript.Run(ctx, r.c.Redis(), []string{k}, token).Err() // else it expires
	}, nil
}

// Watch subscribes to the change channel on the first watcher and
// unsubscribes after the last one stops.
func (r *Redis) Watch(fn func(string)) func() {
	r.mu.Lock()
	defer r.mu.Unlock()
	id := r.next
	r.next++
	r.watchers[id] = fn
	if r.sub == nil {
		ctx, cancel := context.WithTimeout(context.Background(), max(r.c.Timeout(), time.Second))
		r.sub = r.c.Redis().Subscribe(ctx, r.channel())
		_, _ = r.sub.Receive(ctx) // the confirmation; Redis down: go-redis resubscribes when it is back
		cancel()
		r.subDone = make(chan struct{})
		go r.dispatch(r.sub.Channel(), r.subDone)
	}
	return func() { r.unwatch(id) }
}

func (r *Redis) unwatch(id int) {
	r.mu.Lock()
	delete(r.watchers, id)
	var sub *redis.PubSub
	var done chan struct{}
	if len(r.watchers) == 0 && r.sub != nil {
		sub, done, r.sub = r.sub, r.subDone, nil
	}
	r.mu.Unlock()
	if sub != nil {
		_ = sub.Close()
		<-done
	}
}

func (r *Redis) dispatch(ch <-chan *redis.Message, done chan struct{}) {
	defer close(done)
	for m := range ch {
		r.mu.Lock()
		fns := make([]func(string), 0, len(r.watchers))
		for _, fn := range r.watchers {
			fns = append(fns, fn)
		}
		r.mu.Unlock()
		for _, fn := range fns {
			fn(m.Payload)
		}
	}
}

// Close ends the subscription, if any watcher left one open.
func (r *Redis) Close() error {
	r.mu.Lock()
	sub, done := r.sub, r.subDone
	r.sub = nil
	r.watchers = map[int]func(string){}
	r.mu.Unlock()
	if sub != nil {
		_ = sub.Close()
		<-done
	}
	return nil
}
