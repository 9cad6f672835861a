// Package redispins is the pin store every replica shares (cluster.redis):
// catalog.Store on Redis, passing the same contract (pintest) as the file
// store. All keys carry the hash tag {pins}, so on a Redis Cluster they live
// in one slot and a decision is one MULTI/EXEC under WATCH.
package redispins

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/redis/go-redis/v9"

	"github.com/toolnexus/toolnexus/internal/catalog"
	"github.com/toolnexus/toolnexus/internal/cluster"
)

// ErrUnavailable refuses an operation while Redis cannot be reached: the
// catalog then holds what it cannot check (it fails closed).
var ErrUnavailable = errors.New("the shared pin store (cluster.redis) cannot be reached; new and changed tool definitions stay held until it answers")

// maxWatchRetries bounds the optimistic retries of one change that other
// replicas keep racing.
const maxWatchRetries = 16

// Store is catalog.Store on Redis:
//
//	{pins}:seen          set of the sources ever seen
//	{pins}:p:<h(source)> hash tool name → pin (JSON)
//	{pins}:n:<h(name)>   set of the sources that pinned a tool name
//	{pins}:held          hash h(source, tool) → held definition (JSON)
//
// h is a SHA-256 prefix, so an upstream's names, whatever they hold, are
// data and never a key's structure.
type Store struct{ c *cluster.Client }

var _ catalog.Store = (*Store)(nil)

// New is the pin store on c.
func New(c *cluster.Client) *Store { return &Store{c: c} }

func (s *Store) key(name string) string { return s.c.Key("{pins}:" + name) }

func hashed(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func (s *Store) pinsKey(source string) string { return s.key("p:" + hashed(source)) }
func (s *Store) nameKey(name string) string   { return s.key("n:" + hashed(name)) }
func (s *Store) heldKey() string              { return s.key("held") }
func heldField(source, tool string) string    { return hashed(source, tool) }

// do runs op against Redis, failing closed while Redis is away.
func (s *Store) do(ctx context.Context, op func(context.Context, redis.UniversalClient) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !s.c.Up() {
		s.c.Metrics().Fallback(cluster.FallbackPins)
		return ErrUnavailable
	}
	opCtx, cancel := context.WithTimeout(ctx, 4*s.c.Timeout())
	defer cancel()
	err := op(opCtx, s.c.Redis())
	switch {
	case err == nil, errors.Is(err, catalog.ErrUnknown), errors.Is(err, catalog.ErrDecided):
		return err
	case ctx.Err() != nil:
		return ctx.Err()
	case cluster.Unreachable(err):
		s.c.Failed(err)
		s.c.Metrics().Fallback(cluster.FallbackPins)
		return fmt.Errorf("%w (%v)", ErrUnavailable, err)
	}
	return fmt.Errorf("pins: Redis: %w", err)
}

// Layer implements catalog.Store.
func (s *Store) Layer(ctx context.Context, source string) (map[string]catalog.Pin, bool, error) {
	var seen *redis.BoolCmd
	var all *redis.MapStringStringCmd
	err := s.do(ctx, func(ctx context.Context, rdb redis.UniversalClient) error {
		_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			seen = p.SIsMember(ctx, s.key("seen"), source)
			all = p.HGetAll(ctx, s.pinsKey(source))
			return nil
		})
		return err
	})
	if err != nil {
		return nil, false, err
	}
	pins := make(map[string]catalog.Pin, len(all.Val()))
	for name, raw := range all.Val() {
		var p catalog.Pin
		if err := json.Unmarshal([]byte(raw), &p); err != nil {
			return nil, false, fmt.Errorf("pins: %s: %w", name, err)
		}
		pins[name] = p
	}
	return pins, seen.Val(), nil
}

// Trust implements catalog.Store: HSETNX keeps the first replica's pin.
func (s *Store) Trust(ctx context.Context, source string, pins []catalog.Pin) (map[string]catalog.Pin, error) {
	names := make([]string, len(pins))
	vals := make([][]byte, len(pins))
	for i, p := range pins {
		b, err := json.Marshal(p)
		if err != nil {
			return nil, err
		}
		names[i], vals[i] = p.Name, b
	}
	var got *redis.SliceCmd
	err := s.do(ctx, func(ctx context.Context, rdb redis.UniversalClient) error {
		_, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.SAdd(ctx, s.key("seen"), source)
			for i, n := range names {
				p.HSetNX(ctx, s.pinsKey(source), n, vals[i])
				p.SAdd(ctx, s.nameKey(n), source)
			}
			if len(names) > 0 {
				got = p.HMGet(ctx, s.pinsKey(source), names...)
			}
			return nil
		})
		return err
	})
	if err != nil || got == nil {
		return map[string]catalog.Pin{}, err
	}
	out := make(map[string]catalog.Pin, len(names))
	for i, v := range got.Val() {
		str, ok := v.(string)
		if !ok {
			continue
		}
		var p catalog.Pin
		if err := json.Unmarshal([]byte(str), &p); err != nil {
			return nil, fmt.Errorf("pins: %s: %w", names[i], err)
		}
		out[names[i]] = p
	}
	return out, nil
}

// PinnedElsewhere implements catalog.Store.
func (s *Store) PinnedElsewhere(ctx context.Context, source string, names []string) (map[string]string, error) {
	cmds := make([]*redis.StringSliceCmd, len(names))
	err := s.do(ctx, func(ctx context.Context, rdb redis.UniversalClient) error {
		_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, n := range names {
				cmds[i] = p.SMembers(ctx, s.nameKey(n))
			}
			return nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for i, c := range cmds {
		others := slices.DeleteFunc(c.Val(), func(x string) bool { return x == source })
		if len(others) > 0 {
			slices.Sort(others)
			out[names[i]] = others[0]
		}
	}
	return out, nil
}

// List implements catalog.Store.
func (s *Store) List(ctx context.Context) ([]catalog.Held, error) {
	var all map[string]string
	err := s.do(ctx, func(ctx context.Context, rdb redis.UniversalClient) error {
		var err error
		all, err = rdb.HGetAll(ctx, s.heldKey()).Result()
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]catalog.Held, 0, len(all))
	for _, raw := range all {
		var h catalog.Held
		if err := json.Unmarshal([]byte(raw), &h); err != nil {
			return nil, fmt.Errorf("pins: a held definition: %w", err)
		}
		out = append(out, h)
	}
	catalog.SortNewestFirst(out)
	return out, nil
}
