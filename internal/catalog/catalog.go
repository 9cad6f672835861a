// Package catalog stands between every source and the registry, so what it
// does holds for every source kind: it pins tool definitions (trust on first
// use; a changed or new definition is held back, or served with a warning,
// until an approver accepts it) and then applies the operator's overrides
// (rename, new description, fixed arguments). The pin is on the upstream's
// own definition; everything after the catalog (allowlists, policies,
// limits, search, every door) sees only what it published.
//
// docs/catalog.md has the design, the config and the threat list.
package catalog

import (
	"context"
	"log/slog"
	"reflect"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolnexus/toolnexus/internal/every"
	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// Mode is pinning.mode.
type Mode string

// The modes.
const (
	// ModeOff pins nothing (the default).
	ModeOff Mode = "off"
	// ModeHold keeps a changed or new definition out of the registry —
	// not listed, not run: "unknown tool" — until an approver accepts it.
	ModeHold Mode = "hold"
	// ModeWarn serves it, and logs, audits and counts the change.
	ModeWarn Mode = "warn"
)

// DefaultRecheck is how often the definitions held back are looked up again
// in the store: an approval given on another replica, or a store that was
// unreachable, takes effect within it.
const DefaultRecheck = 2 * time.Second

// storeTimeout bounds one batch of store operations of a publish.
const storeTimeout = 10 * time.Second

// Settings are the parts of the config the catalog applies; Configure swaps
// them on reload.
type Settings struct {
	Mode           Mode
	HoldFirstSight bool
	// Overrides are by the registry name a source publishes.
	Overrides map[string]Override
}

// Options configure New.
type Options struct {
	// Store keeps the pins; required unless pinning stays off.
	Store  Store
	Logger *slog.Logger
	// Metrics is where toolnexus_definition_changes_total and
	// toolnexus_definitions_held register (nowhere when nil).
	Metrics prometheus.Registerer
	// Sources are the source labels whose change counter starts at 0.
	Sources []string
	// OnChange hears every definition held back (served false) or, in
	// warn mode, served changed: the audit log.
	OnChange func(h Held, served bool)
	// Recheck overrides DefaultRecheck.
	Recheck time.Duration
}

// Catalog is the sources.Publisher every source instance publishes through.
type Catalog struct {
	next     sources.Publisher
	store    Store
	log      *slog.Logger
	onChange func(Held, bool)
	changes  *prometheus.CounterVec

	mu     sync.Mutex // orders publishes, rechecks, decisions and Configure
	set    Settings
	ovr    overrides
	layers map[registry.LayerID]*layer

	recheck time.Duration
	// stopRecheck ends the recheck loop; nil until the first Configure
	// that pins starts it.
	stopRecheck func()
	closed      bool
}

// layer is what the catalog remembers of one source layer: the last tools
// its source published (republished when settings change or a definition
// is approved) and a verdict per tool, so that re-listing unchanged tools
// costs one map lookup and a byte comparison each.
type layer struct {
	raw []tool.Tool

	loaded  bool
	loadErr error
	pins    map[string]Pin
	seen    bool

	verdicts map[string]*verdict
	order    []*verdict      // the verdicts of the last publish, in its order
	held     map[string]bool // tool names held back at the last publish
}

var _ sources.Publisher = (*Catalog)(nil)

// New makes a catalog publishing into next (the registry) with pinning off
// and no overrides; Configure sets them.
func New(next sources.Publisher, opts Options) *Catalog {
	c := &Catalog{next: next, store: opts.Store, log: opts.Logger, onChange: opts.OnChange,
		set: Settings{Mode: ModeOff}, layers: map[registry.LayerID]*layer{},
		recheck: opts.Recheck}
	if c.log == nil {
		c.log = slog.Default()
	}
	if c.recheck <= 0 {
		c.recheck = DefaultRecheck
	}
	c.registerMetrics(opts.Metrics, opts.Sources)
	return c
}

// Close ends the recheck loop, if one runs. The catalog keeps publishing
// (the engine closes its sources after).
func (c *Catalog) Close() {
	c.mu.Lock()
	stop, closed := c.stopRecheck, c.closed
	c.closed = true
	c.mu.Unlock()
	if stop != nil && !closed {
		stop()
	}
}

// Store is where the pins are kept (nil without one).
func (c *Catalog) Store() Store { return c.store }

// Configure applies settings from now on and republishes every layer under
// them; unchanged settings change nothing.
func (c *Catalog) Configure(s Settings) {
	if s.Mode == "" {
		s.Mode = ModeOff
	}
	if s.Mode != ModeOff && c.store == nil {
		c.log.Error("pinning needs a pin store (pinning.dir or cluster.redis); pinning stays off")
		s.Mode = ModeOff
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if reflect.DeepEqual(s, c.set) {
		return
	}
	modeChanged := s.Mode != c.set.Mode || s.HoldFirstSight != c.set.HoldFirstSight
	c.set = s
	if s.Mode != ModeOff && c.stopRecheck == nil && !c.closed {
		c.stopRecheck = every.Start(c.recheck, c.recheckHeld)
	}
	c.ovr = compileOverrides(s.Overrides)
	for id, l := range c.layers {
		if modeChanged {
			l.verdicts, l.order, l.loaded = nil, nil, false
		}
		if err := c.publishLocked(id, l); err != nil {
			c.log.Warn("republishing a source under the new catalog settings", "source", id.String(), "error", err)
		}
	}
}

// Replace implements sources.Publisher: the source's tools, pinned, then
// overridden, go to the registry.
func (c *Catalog) Replace(id registry.LayerID, tools []tool.Tool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.layers[id]
	if l == nil {
		l = &layer{}
		c.layers[id] = l
	}
	l.raw = tools
	return c.publishLocked(id, l)
}

// Remove implements sources.Publisher. The layer's pins stay in the store:
// a source configured again later is judged against them.
func (c *Catalog) Remove(id registry.LayerID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.layers, id)
	c.next.Remove(id)
}

func (c *Catalog) publishLocked(id registry.LayerID, l *layer) error {
	tools := l.raw
	if c.set.Mode != ModeOff {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		tools = c.pin(ctx, id, l, tools)
		cancel()
	}
	return c.next.Replace(id, c.ovr.apply(tools, c.log))
}

// recheckHeld, every c.recheck, looks the held definitions up again, and
// republishes a layer only when one of them is now pinned (approved on
// another replica) or the store came back: nothing else changes, so
// watchers are not told of a change that is none.
func (c *Catalog) recheckHeld() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.set.Mode == ModeOff {
		return
	}
	for id, l := range c.layers {
		if len(l.held) == 0 && l.loadErr == nil {
			continue
		}
		before := l.held
		hadErr := l.loadErr != nil
		l.loaded = false
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		tools := c.pin(ctx, id, l, l.raw)
		cancel()
		if !hadErr && sameNames(before, l.held) {
			continue
		}
		if err := c.next.Replace(id, c.ovr.apply(tools, c.log)); err != nil {
			c.log.Warn("republishing a source after a held definition was decided", "source", id.String(), "error", err)
		}
	}
}

func sameNames(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// List returns every held definition, pending and decided, newest first.
func (c *Catalog) List(ctx context.Context) ([]Held, error) {
	if c.store == nil {
		return nil, nil
	}
	return c.store.List(ctx)
}

// Decide approves or denies a held definition as by, and republishes its
// source at once: an approved definition is listed and runs from the
// moment Decide returns (on this replica; the others within Recheck).
func (c *Catalog) Decide(ctx context.Context, id string, approve bool, by, reason string) (Held, error) {
	if c.store == nil {
		return Held{}, ErrUnknown
	}
	h, err := c.store.Decide(ctx, id, Decision{Approve: approve, By: by, Reason: reason, At: time.Now().UTC()})
	if err != nil {
		return h, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for lid, l := range c.layers {
		if lid.String() != h.Source {
			continue
		}
		l.loaded = false
		if err := c.publishLocked(lid, l); err != nil {
			c.log.Warn("republishing a source after a decision", "source", h.Source, "error", err)
		}
	}
	return h, nil
}
