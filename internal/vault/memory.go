package vault

import (
	"context"
	"strings"
	"sync"
	"time"
)

// Memory is a Backend in this process's memory: lost at restart and not
// shared with other replicas. The records in it are sealed all the same.
type Memory struct {
	local
	mu   sync.Mutex
	recs map[string]memRecord
}

type memRecord struct {
	rec     []byte
	expires time.Time // zero: never
}

func (r memRecord) live(now time.Time) bool { return r.expires.IsZero() || now.Before(r.expires) }

var _ Backend = (*Memory)(nil)

// NewMemory is an empty in-memory backend.
func NewMemory() *Memory { return &Memory{recs: map[string]memRecord{}} }

func expiry(ttl time.Duration) time.Time {
	if ttl <= 0 {
		return time.Time{}
	}
	return time.Now().Add(ttl)
}

func (m *Memory) Put(_ context.Context, key string, rec []byte, ttl time.Duration) error {
	m.mu.Lock()
	m.recs[key] = memRecord{rec: append([]byte(nil), rec...), expires: expiry(ttl)}
	m.mu.Unlock()
	m.changed(key)
	return nil
}

func (m *Memory) Get(_ context.Context, key string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.recs[key]
	if !ok || !r.live(time.Now()) {
		return nil, ErrNotFound
	}
	return r.rec, nil
}

func (m *Memory) Take(_ context.Context, key string) ([]byte, error) {
	m.mu.Lock()
	r, ok := m.recs[key]
	delete(m.recs, key)
	m.mu.Unlock()
	if !ok || !r.live(time.Now()) {
		return nil, ErrNotFound
	}
	m.changed(key)
	return r.rec, nil
}

func (m *Memory) Delete(_ context.Context, key string) (bool, error) {
	m.mu.Lock()
	r, ok := m.recs[key]
	delete(m.recs, key)
	m.mu.Unlock()
	if ok {
		m.changed(key)
	}
	return ok && r.live(time.Now()), nil
}

func (m *Memory) Keys(_ context.Context, prefix string) ([]string, error) {
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for k, r := range m.recs {
		if !r.live(now) {
			delete(m.recs, k)
			continue
		}
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	return out, nil
}

func (m *Memory) Close() error { return nil }
