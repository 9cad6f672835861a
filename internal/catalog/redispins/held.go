package redispins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/toolnexus/toolnexus/internal/catalog"
)

// The changes to held definitions read, then write under WATCH of the held
// hash: a replica racing another retries and sees the other's outcome (a
// second decision gets ErrDecided).

// watched runs fn under WATCH of the held hash, retrying while another
// replica changed it in between.
func (s *Store) watched(ctx context.Context, fn func(tx *redis.Tx) error) error {
	return s.do(ctx, func(ctx context.Context, rdb redis.UniversalClient) error {
		for range maxWatchRetries {
			err := rdb.Watch(ctx, fn, s.heldKey())
			if !errors.Is(err, redis.TxFailedErr) {
				return err
			}
		}
		return fmt.Errorf("pins: the held definitions kept changing under %d attempts", maxWatchRetries)
	})
}

func heldOf(raw string) (catalog.Held, error) {
	var h catalog.Held
	err := json.Unmarshal([]byte(raw), &h)
	return h, err
}

// Hold implements catalog.Store.
func (s *Store) Hold(ctx context.Context, h catalog.Held) (catalog.Held, error) {
	field := heldField(h.Source, h.Tool)
	val, err := json.Marshal(h)
	if err != nil {
		return h, err
	}
	got := h
	err = s.watched(ctx, func(tx *redis.Tx) error {
		cur, err := tx.HGet(ctx, s.heldKey(), field).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return err
		}
		if err == nil {
			if old, err := heldOf(cur); err == nil && old.ID == h.ID {
				got = old
				return nil
			}
		}
		got = h
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.HSet(ctx, s.heldKey(), field, val)
			return nil
		})
		return err
	})
	return got, err
}

// find is the held definition id and its field (a scan: there is one per
// source and tool, and decisions are rare).
func (s *Store) find(ctx context.Context, tx *redis.Tx, id string) (catalog.Held, string, error) {
	all, err := tx.HGetAll(ctx, s.heldKey()).Result()
	if err != nil {
		return catalog.Held{}, "", err
	}
	for field, raw := range all {
		h, err := heldOf(raw)
		if err == nil && h.ID == id {
			return h, field, nil
		}
	}
	return catalog.Held{}, "", catalog.ErrUnknown
}

// Withdraw implements catalog.Store.
func (s *Store) Withdraw(ctx context.Context, id string) error {
	return s.watched(ctx, func(tx *redis.Tx) error {
		h, field, err := s.find(ctx, tx, id)
		if errors.Is(err, catalog.ErrUnknown) || (err == nil && h.Status != catalog.Pending) {
			return nil
		}
		if err != nil {
			return err
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.HDel(ctx, s.heldKey(), field)
			return nil
		})
		return err
	})
}

// Decide implements catalog.Store.
func (s *Store) Decide(ctx context.Context, id string, d catalog.Decision) (catalog.Held, error) {
	var got catalog.Held
	err := s.watched(ctx, func(tx *redis.Tx) error {
		h, field, err := s.find(ctx, tx, id)
		if err != nil {
			return err
		}
		got = h
		if h.Status != catalog.Pending {
			return catalog.ErrDecided
		}
		catalog.Record(&h, d)
		val, err := json.Marshal(h)
		if err != nil {
			return err
		}
		pin, err := json.Marshal(h.New)
		if err != nil {
			return err
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.HSet(ctx, s.heldKey(), field, val)
			if d.Approve {
				p.HSet(ctx, s.pinsKey(h.Source), h.Tool, pin)
				p.SAdd(ctx, s.key("seen"), h.Source)
				p.SAdd(ctx, s.nameKey(h.Tool), h.Source)
			}
			return nil
		})
		if err == nil {
			got = h
		}
		return err
	})
	return got, err
}
