package search

import (
	"sync"
	"sync/atomic"

	"github.com/toolnexus/toolnexus/pkg/registry"
)

// Cache holds the index of the newest snapshot searched so far. A search
// reads it without a lock; the first search of a new revision builds its
// index (reusing the analysis of unchanged tools) under a mutex, so a burst
// of searches right after a reload builds it once.
type Cache struct {
	cur atomic.Pointer[Index]
	mu  sync.Mutex
}

// For returns the index of snap, building it when needed. A search against
// an older snapshot than the cached one (a request that read the registry
// just before a reload) gets an index of its own and leaves the cache alone.
func (c *Cache) For(snap *registry.Snapshot) *Index {
	if ix := c.cur.Load(); ix != nil && ix.snap == snap {
		return ix
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	cur := c.cur.Load()
	if cur != nil && cur.snap == snap {
		return cur
	}
	ix := Build(snap, cur)
	if cur == nil || cur.snap.Revision() < snap.Revision() {
		c.cur.Store(ix)
	}
	return ix
}
