package engine

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// DefaultDrainTimeout bounds how long a replaced or removed source instance
// is kept alive for the calls still running on its tools.
const DefaultDrainTimeout = 60 * time.Second

// instancePublisher is the Publisher one source instance publishes through.
//
// It counts the calls running on the instance's tools, so that when a
// reload replaces or removes the instance, the old one is closed only once
// those calls have finished: a call finishes on the tool it started with,
// even when closing that tool's source would cut it off (an MCP server's
// child process). And it goes inert when the instance is retired, so a late
// publish from the old instance (an MCP list_changed racing the swap)
// cannot overwrite the layer of the instance that replaced it.
type instancePublisher struct {
	reg sources.Publisher

	mu      sync.Mutex // orders publishes against retire
	retired bool
	// staging holds publishes back (in staged) until commit: a retry's
	// instance publishes only once the engine keeps it (retry.go).
	staging bool
	staged  *stagedLayer
	// feat is where features go (features.go); nil without a catalog.
	feat       *featureSink
	stagedFeat *stagedFeatures

	running  atomic.Int64
	draining atomic.Bool
	idle     chan struct{} // cap 1: wakes drain when running reaches 0
}

func newInstancePublisher(reg sources.Publisher) *instancePublisher {
	return &instancePublisher{reg: reg, idle: make(chan struct{}, 1)}
}

// stagedLayer is the last publish of a staging instance.
type stagedLayer struct {
	id      registry.LayerID
	tools   []tool.Tool
	removed bool
}

// Replace publishes tools whose calls are counted.
func (p *instancePublisher) Replace(id registry.LayerID, tools []tool.Tool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.retired {
		return nil
	}
	if p.staging {
		p.staged = &stagedLayer{id: id, tools: tools}
		return nil
	}
	return p.replaceLocked(id, tools)
}

// commit ends staging: the last publish held back goes to the registry.
func (p *instancePublisher) commit() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.staging = false
	p.commitFeaturesLocked()
	st := p.staged
	p.staged = nil
	switch {
	case st == nil || p.retired:
		return nil
	case st.removed:
		p.reg.Remove(st.id)
		return nil
	}
	return p.replaceLocked(st.id, st.tools)
}

// stagedCount is how many tools a staging instance would publish.
func (p *instancePublisher) stagedCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.staged == nil {
		return 0
	}
	return len(p.staged.tools)
}

func (p *instancePublisher) replaceLocked(id registry.LayerID, tools []tool.Tool) error {
	counted := make([]tool.Tool, len(tools))
	for i, t := range tools {
		if run := t.Run; run != nil {
			t.Run = func(ctx context.Context, c tool.Call) tool.Result {
				p.running.Add(1)
				defer p.leave()
				return run(ctx, c)
			}
		}
		counted[i] = t
	}
	return p.reg.Replace(id, counted)
}

// Remove drops a layer unless the instance is retired.
func (p *instancePublisher) Remove(id registry.LayerID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.retired:
	case p.staging:
		p.staged = &stagedLayer{id: id, removed: true}
		p.stagedFeat = nil
	default:
		p.reg.Remove(id)
		if p.feat != nil {
			p.feat.catalog.Remove(id)
		}
	}
}

// retire stops the instance from publishing; when it returns, no publish of
// the instance is in progress or can happen.
func (p *instancePublisher) retire() {
	p.mu.Lock()
	p.retired = true
	p.mu.Unlock()
}

func (p *instancePublisher) leave() {
	if p.running.Add(-1) == 0 && p.draining.Load() {
		select {
		case p.idle <- struct{}{}:
		default:
		}
	}
}

// drain waits until no call runs on the instance's tools, or ctx ends.
// It reports whether the calls finished.
func (p *instancePublisher) drain(ctx context.Context) bool {
	p.draining.Store(true)
	for p.running.Load() > 0 {
		select {
		case <-p.idle:
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// release retires an instance that is no longer in the registry and closes
// it in the background once its running calls are done (or the drain
// timeout passes, or the engine closes). Close waits for these.
func (e *Engine) release(id registry.LayerID, inst *instance) {
	inst.pub.retire()
	e.closing.Add(1)
	go func() {
		defer e.closing.Done()
		ctx, cancel := context.WithTimeout(e.drainCtx, e.opts.DrainTimeout)
		defer cancel()
		if !inst.pub.drain(ctx) {
			e.log.Warn("closing a replaced source with calls still running on it", "source", id.String(),
				"running", inst.pub.running.Load(), "waited", e.opts.DrainTimeout)
		}
		closeQuietly(e.log, id, inst.src)
	}()
}
