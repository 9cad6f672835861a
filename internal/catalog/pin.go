package catalog

import (
	"bytes"
	"context"
	"time"

	"github.com/toolnexus/toolnexus/pkg/registry"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// verdict is the catalog's judgement of one tool as its source last
// published it. The raw fields are kept (not copied: a published tool is
// read-only) so that a re-listing of the same tool is recognised by byte
// comparison, without canonicalising or hashing anything.
type verdict struct {
	name    string
	desc    string
	in, out []byte
	ann     *tool.Annotations

	canon  []byte
	digest string // "" when the definition cannot be canonicalised

	serve bool
	// settled: the definition matches its pin (or cannot be pinned); it
	// is not looked up again while the source publishes it unchanged.
	settled bool
	// firstSight: the source was never seen; firstSight decides.
	firstSight bool
	// heldID is the request recorded in the store ("" until it is).
	heldID string
	// reported: the change was logged, counted and audited by this process.
	reported bool
}

func (v *verdict) same(t *tool.Tool) bool {
	return v.desc == t.Description && bytes.Equal(v.in, t.InputSchema) && bytes.Equal(v.out, t.OutputSchema) &&
		sameAnnotations(v.ann, t.Annotations)
}

func sameAnnotations(a, b *tool.Annotations) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Title == b.Title && sameHint(a.ReadOnly, b.ReadOnly) && sameHint(a.Destructive, b.Destructive) &&
		sameHint(a.Idempotent, b.Idempotent) && sameHint(a.OpenWorld, b.OpenWorld)
}

func sameHint(a, b *bool) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// pin returns the tools of layer id that may be served, judging each
// against its pin: a tool published unchanged since the last time costs a
// map lookup and a byte comparison; only new or changed definitions are
// canonicalised, hashed and looked up in the store.
func (c *Catalog) pin(ctx context.Context, id registry.LayerID, l *layer, tools []tool.Tool) []tool.Tool {
	if !l.loaded {
		c.load(ctx, id, l)
	}
	if l.verdicts == nil || len(l.verdicts) > 2*len(tools)+16 {
		l.verdicts = forget(l.verdicts, tools)
	}
	var first []int
	// A source lists its tools in the same order every time: the verdict
	// at the same position is found without hashing the name.
	cur := make([]*verdict, len(tools))
	for i := range tools {
		t := &tools[i]
		var v *verdict
		if i < len(l.order) && l.order[i].name == t.Name {
			v = l.order[i]
		} else {
			v = l.verdicts[t.Name]
		}
		switch {
		case v != nil && v.same(t):
			if !v.settled {
				c.reconsider(ctx, id, l, v, t)
			}
		default:
			v = c.judge(ctx, id, l, t, v)
			l.verdicts[t.Name] = v
		}
		cur[i] = v
		if v.firstSight {
			first = append(first, i)
		}
	}
	l.order = cur
	if len(first) > 0 {
		c.firstSight(ctx, id, l, tools, first)
	}
	return served(l, tools)
}

// forget keeps the verdicts of the tools still published, so a source
// that renames its tools again and again does not grow the cache.
func forget(old map[string]*verdict, tools []tool.Tool) map[string]*verdict {
	out := make(map[string]*verdict, len(tools))
	for i := range tools {
		if v, ok := old[tools[i].Name]; ok {
			out[tools[i].Name] = v
		}
	}
	return out
}

// served is tools without those held back (l.order are their verdicts);
// the same slice when none is.
func served(l *layer, tools []tool.Tool) []tool.Tool {
	var held map[string]bool
	for i, v := range l.order {
		if !v.serve {
			if held == nil {
				held = map[string]bool{}
			}
			held[tools[i].Name] = true
		}
	}
	l.held = held
	if held == nil {
		return tools
	}
	out := make([]tool.Tool, 0, len(tools)-len(held))
	for _, t := range tools {
		if !held[t.Name] {
			out = append(out, t)
		}
	}
	return out
}

// load reads the layer's pins. A store that cannot be read before the
// layer's pins were ever loaded leaves them unknown: nothing new is
// trusted (hold mode serves only what it has settled) until a recheck
// reads them; once loaded, a failed re-read keeps the pins known.
func (c *Catalog) load(ctx context.Context, id registry.LayerID, l *layer) {
	pins, seen, err := c.store.Layer(ctx, id.String())
	if err != nil {
		if l.pins == nil {
			if l.loadErr == nil {
				c.log.Error("the pin store cannot be read; the source's new and changed definitions are held until it can", "source", id.String(), "error", err)
			}
			l.loadErr = err
		}
		return
	}
	if l.loadErr != nil {
		c.log.Info("the pin store can be read again", "source", id.String())
	}
	l.pins, l.seen, l.loadErr, l.loaded = pins, seen, nil, true
}

// judge makes the verdict of a definition the layer has not published
// before (prev is the verdict of the tool's earlier text, if any).
func (c *Catalog) judge(ctx context.Context, id registry.LayerID, l *layer, t *tool.Tool, prev *verdict) *verdict {
	v := &verdict{name: t.Name, desc: t.Description, in: t.InputSchema, out: t.OutputSchema, ann: t.Annotations}
	canon, err := ToolDefinition(t).Canonical()
	if err != nil {
		// A definition no pin can cover (a schema that repeats a key)
		// is never trusted in hold mode.
		v.serve, v.settled = c.set.Mode == ModeWarn, true
		c.log.Warn("a tool definition cannot be pinned: it is not canonical JSON", "source", id.String(), "tool", t.Name,
			"error", err, "served", v.serve)
		return v
	}
	v.canon, v.digest = canon, Digest(canon)
	v.reported = prev != nil && prev.reported && prev.digest == v.digest
	c.decide(ctx, id, l, v, t, prev)
	return v
}

// reconsider looks a held definition up again: its pin may now match
// (an approval here or on another replica), or its request may not have
// been recorded yet (the store was down).
func (c *Catalog) reconsider(ctx context.Context, id registry.LayerID, l *layer, v *verdict, t *tool.Tool) {
	if v.digest == "" || l.loadErr != nil {
		return
	}
	if p, ok := l.pins[t.Name]; ok && p.Digest == v.digest {
		v.serve, v.settled, v.heldID, v.canon = true, true, "", nil
		return
	}
	if v.heldID == "" && !v.firstSight {
		c.decide(ctx, id, l, v, t, v)
	}
}

// decide compares a definition with its pin.
func (c *Catalog) decide(ctx context.Context, id registry.LayerID, l *layer, v *verdict, t *tool.Tool, prev *verdict) {
	if l.loadErr != nil {
		v.serve = c.set.Mode == ModeWarn
		return
	}
	p, pinned := l.pins[t.Name]
	switch {
	case pinned && p.Digest == v.digest:
		v.serve, v.settled = true, true
		v.canon = nil // a settled verdict is not decided again: the pin keeps the text
		if prev != nil && prev.heldID != "" {
			// The source went back to the pinned text: its request is moot.
			if err := c.store.Withdraw(ctx, prev.heldID); err != nil {
				c.log.Warn("withdrawing a held definition", "source", id.String(), "tool", t.Name, "error", err)
			}
		}
	case pinned:
		c.hold(ctx, id, v, t, Changed, &p, "")
	case !l.seen:
		v.firstSight = true
		v.serve = c.set.Mode == ModeWarn
	default:
		c.hold(ctx, id, v, t, Added, nil, "")
	}
}

// firstSight decides the tools of a source seen for the first time: each
// is trusted and pinned, unless pinning.holdFirstSight holds them all or
// another source has pinned its name (it would take that trusted tool's
// place, or lose its own to it).
func (c *Catalog) firstSight(ctx context.Context, id registry.LayerID, l *layer, tools []tool.Tool, idx []int) {
	names := make([]string, len(idx))
	for i, j := range idx {
		names[i] = tools[j].Name
	}
	var elsewhere map[string]string
	if !c.set.HoldFirstSight {
		var err error
		if elsewhere, err = c.store.PinnedElsewhere(ctx, id.String(), names); err != nil {
			c.log.Error("the pin store cannot be read; a new source's definitions are held until it can", "source", id.String(), "error", err)
			return // every candidate stays unsettled: the recheck tries again
		}
	}
	var trust []Pin
	var trustIdx []int
	now := time.Now().UTC()
	for _, j := range idx {
		t := &tools[j]
		v := l.verdicts[t.Name]
		switch other, shadows := elsewhere[t.Name]; {
		case c.set.HoldFirstSight:
			v.firstSight = false
			c.hold(ctx, id, v, t, FirstSeen, nil, "")
		case shadows:
			v.firstSight = false
			c.hold(ctx, id, v, t, Shadows, nil, other)
		default:
			trust = append(trust, Pin{Name: t.Name, Digest: v.digest, Definition: v.canon, At: now, By: FirstSight})
			trustIdx = append(trustIdx, j)
		}
	}
	if len(trust) == 0 {
		return
	}
	got, err := c.store.Trust(ctx, id.String(), trust)
	if err != nil {
		c.log.Error("the pin store cannot be written; a new source's definitions are held until it can", "source", id.String(), "error", err)
		return
	}
	l.seen = true
	if l.pins == nil {
		l.pins = map[string]Pin{}
	}
	for i, p := range trust {
		v := l.verdicts[p.Name]
		v.firstSight = false
		l.pins[p.Name] = got[p.Name]
		c.decide(ctx, id, l, v, &tools[trustIdx[i]], nil)
	}
}

// hold records the request for a definition that does not match its pin
// and reports the change once: log, toolnexus_definition_changes_total,
// audit. In warn mode the definition is served all the same.
func (c *Catalog) hold(ctx context.Context, id registry.LayerID, v *verdict, t *tool.Tool, ch Change, old *Pin, shadowed string) {
	now := time.Now().UTC()
	h := Held{ID: HeldID(id.String(), t.Name, v.digest), Source: id.String(), Tool: t.Name, Change: ch, Old: old,
		New: Pin{Name: t.Name, Digest: v.digest, Definition: v.canon, At: now}, Shadowed: shadowed, Status: Pending, SeenAt: now}
	v.serve = c.set.Mode == ModeWarn
	stored, err := c.store.Hold(ctx, h)
	if err != nil {
		c.log.Error("the pin store cannot record a held definition; it stays held and is recorded once the store answers",
			"source", h.Source, "tool", t.Name, "error", err)
	} else {
		v.heldID, h = stored.ID, stored
	}
	if v.reported {
		return
	}
	v.reported = true
	c.changes.WithLabelValues(t.Source).Inc()
	msg := "a tool definition changed: held back until an approver accepts it (toolnexus approvals)"
	if v.serve {
		msg = "a tool definition changed: served (pinning.mode warn); accept it with toolnexus approve to stop this warning"
	}
	c.log.Warn(msg, "source", h.Source, "tool", t.Name, "change", string(ch), "id", h.ID, "status", string(h.Status))
	if c.onChange != nil {
		c.onChange(h, v.serve)
	}
}
