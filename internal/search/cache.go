package search

import (
	"sync"
	"sync/atomic"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// maxViews bounds how many views keep an index at once. A view is an
// allowlist (intersected with what a door serves), and callers with the same
// allowlist share it, so a deployment has few; past the bound the view
// searched least recently gives its index up and rebuilds it when it
// searches again.
const maxViews = 32

// Cache holds, per view, the index of the newest snapshot that view searched.
// A search reads it without a lock; the first search of a view at a new
// revision builds its index (reusing every unchanged tool's analysis, which
// all views share) under the view's own mutex, so a burst of searches right
// after a reload builds it once and views do not wait for each other.
type Cache struct {
	// Servers says what each source says about itself (ServerInfo), by
	// its layer (LayerID.String()), for the server field of its tools; it
	// is asked once per index built. nil = each source's layer name alone.
	// Set it before the first search.
	Servers func() map[string]ServerInfo
	// Embedder, when set, is the semantic side every index fuses with its
	// lexical ranking (search.embeddings). Set it before the first search.
	Embedder *Embedder

	views sync.Map // View.Key → *slot
	mu    sync.Mutex
	n     int // slots in views, under mu
	clock atomic.Int64
	docs  analyses
}

type slot struct {
	cur  atomic.Pointer[Index]
	mu   sync.Mutex
	used atomic.Int64 // Cache.clock at the last search, for eviction
}

// For returns the index of snap as v shows it, building it when needed. A
// search against an older snapshot than the cached one (a request that read
// the registry just before a reload) gets an index of its own and leaves the
// cache alone.
func (c *Cache) For(snap *registry.Snapshot, v View) *Index {
	s := c.slot(v.Key)
	s.used.Store(c.clock.Add(1))
	if ix := s.cur.Load(); ix != nil && ix.snap == snap {
		return ix
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.cur.Load()
	if cur != nil && cur.snap == snap {
		return cur
	}
	var servers map[string]ServerInfo
	if c.Servers != nil {
		servers = c.Servers()
	}
	ix := build(snap, v, &defaultRanking, servers, &c.docs)
	ix.embedder, ix.viewKey = c.Embedder, v.Key
	if cur == nil || cur.snap.Revision() < snap.Revision() {
		s.cur.Store(ix)
	}
	return ix
}

func (c *Cache) slot(key string) *slot {
	if s, ok := c.views.Load(key); ok {
		return s.(*slot)
	}
	s, loaded := c.views.LoadOrStore(key, new(slot))
	if loaded {
		return s.(*slot)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n++; c.n > maxViews {
		c.evictLocked(key)
	}
	return s.(*slot)
}

// evictLocked drops the view searched least recently, other than keep.
func (c *Cache) evictLocked(keep string) {
	var oldest any
	least := int64(-1)
	c.views.Range(func(k, s any) bool {
		if u := s.(*slot).used.Load(); k != keep && (least < 0 || u < least) {
			oldest, least = k, u
		}
		return true
	})
	if oldest != nil {
		c.views.Delete(oldest)
		c.n--
	}
}

// analyses keeps each tool's analysis for every view and the next
// revision: it depends only on the tool, whose pointer stays the same while
// its layer is not replaced. Tools of the revision before the newest are
// kept too, so a view rebuilding after a reload reuses them; older ones are
// dropped.
type analyses struct {
	mu        sync.Mutex
	rev       uint64
	cur, prev map[*tool.Tool]*doc
}

// get returns t's analysis, making it when no view analysed t yet. Only
// visible tools are ever asked for, so a view's build never analyses what
// its caller cannot see.
func (a *analyses) get(rev uint64, t *tool.Tool) *doc {
	a.mu.Lock()
	if a.cur == nil || rev > a.rev {
		a.rev, a.prev, a.cur = rev, a.cur, map[*tool.Tool]*doc{}
	}
	d := a.cur[t]
	if d == nil {
		if d = a.prev[t]; d != nil {
			a.cur[t] = d
		}
	}
	a.mu.Unlock()
	if d != nil {
		return d
	}
	d = defaultRanking.an.analyse(t.Name, t.Description, t.InputSchema)
	a.mu.Lock()
	if rev >= a.rev {
		a.cur[t] = d
	}
	a.mu.Unlock()
	return d
}
