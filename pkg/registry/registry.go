package registry

import (
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// Registry is the atomic later-wins tool registry. The zero value is not
// usable; call New.
type Registry struct {
	current atomic.Pointer[Snapshot]

	mu       sync.Mutex // serialises writers; readers never take it
	layers   map[LayerID][]*tool.Tool
	watchers map[*Watcher]struct{}
	logger   *slog.Logger
	onChange []*hook
}

// hook is one change subscriber; a pointer so that Subscribe's cancel can
// find and remove exactly its own entry.
type hook struct{ fn func(prev, next *Snapshot) }

// Option configures New.
type Option func(*Registry)

// WithLogger sets where shadowing warnings go (slog.Default otherwise).
func WithLogger(l *slog.Logger) Option { return func(r *Registry) { r.logger = l } }

// WithOnChange registers a hook called, under the writer lock and in revision
// order, after every published change. Keep it quick: it delays writers,
// never readers.
func WithOnChange(fn func(prev, next *Snapshot)) Option {
	return func(r *Registry) { r.onChange = append(r.onChange, &hook{fn}) }
}

// Subscribe registers fn like WithOnChange, on a registry that already exists,
// and returns the function that removes it. fn is not called for the
// current snapshot: read Snapshot after subscribing to start in step.
func (r *Registry) Subscribe(fn func(prev, next *Snapshot)) (cancel func()) {
	h := &hook{fn}
	r.mu.Lock()
	r.onChange = append(r.onChange, h)
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		for i, x := range r.onChange {
			if x == h {
				r.onChange = append(r.onChange[:i:i], r.onChange[i+1:]...)
				return
			}
		}
	}
}

// New makes an empty registry at revision 0.
func New(opts ...Option) *Registry {
	r := &Registry{
		layers:   map[LayerID][]*tool.Tool{},
		watchers: map[*Watcher]struct{}{},
		logger:   slog.Default(),
	}
	for _, o := range opts {
		o(r)
	}
	r.current.Store(emptySnapshot)
	return r
}

// Snapshot returns the current immutable view. It never blocks.
func (r *Registry) Snapshot() *Snapshot { return r.current.Load() }

// Replace swaps the whole content of one layer for tools (defaults filled in,
// as tool.New does) and publishes the result. Within the layer a repeated
// name is an error; nothing changes then. An empty list keeps the layer, so
// ListSources can still show it with zero tools; use Remove to drop it.
func (r *Registry) Replace(id LayerID, tools []tool.Tool) error {
	// Copy into one backing array: the caller's slice stays theirs, and a
	// 10,000-tool layer costs one allocation here instead of 10,000.
	copies := slices.Clone(tools)
	ptrs := make([]*tool.Tool, len(copies))
	seen := make(map[string]struct{}, len(copies))
	for i := range copies {
		t := &copies[i]
		if err := t.Normalize(); err != nil {
			return fmt.Errorf("layer %s: %w", id, err)
		}
		if _, dup := seen[t.Name]; dup {
			return fmt.Errorf("layer %s: tool name %q appears twice", id, t.Name)
		}
		seen[t.Name] = struct{}{}
		ptrs[i] = t
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.layers[id] = ptrs
	r.publishLocked()
	return nil
}

// Remove drops a layer entirely (a source that was removed from the config).
// Removing an absent layer changes nothing and publishes nothing.
func (r *Registry) Remove(id LayerID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.layers[id]; !ok {
		return
	}
	delete(r.layers, id)
	r.publishLocked()
}

// Layers lists the layer ids present, in precedence order.
func (r *Registry) Layers() []LayerID {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids := make([]LayerID, 0, len(r.layers))
	for id := range r.layers {
		ids = append(ids, id)
	}
	sortIDs(ids)
	return ids
}

func (r *Registry) publishLocked() {
	prev := r.current.Load()
	next := build(prev.revision+1, r.layers)
	r.current.Store(next)
	r.warnNewShadows(prev, next)
	for _, h := range r.onChange {
		h.fn(prev, next)
	}
	for w := range r.watchers {
		w.deliver(Change{Prev: prev, Next: next})
	}
}

// warnNewShadows logs each shadowing once, when it first appears, so a
// collision is never silent but a steady state does not flood the log.
func (r *Registry) warnNewShadows(prev, next *Snapshot) {
	if len(next.shadowed) == 0 {
		return
	}
	old := make(map[Shadow]struct{}, len(prev.shadowed))
	for _, s := range prev.shadowed {
		old[s] = struct{}{}
	}
	for _, s := range next.shadowed {
		if _, ok := old[s]; !ok {
			r.logger.Warn("tool shadowed by a later source", "tool", s.Name,
				"hidden", s.Hidden.String(), "winner", s.WinnerIn.String())
		}
	}
}

// UnknownTool is the result for a name no tool has.
func UnknownTool(name string) tool.Result {
	return tool.FailureWith(tool.OutcomeUnknownTool, "unknown tool: "+name)
}
