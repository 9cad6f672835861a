package console

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/catalog"
	"github.com/toolnexus/toolnexus/internal/core"
)

// Held tool definitions (pinning): a source whose tool definition
// changed, or that added a tool, has the new definition held until an
// approver approves it. ApprovalService lists them (kind "definition")
// with the old and the new text; the console shows them on /approvals
// below the held calls, to the same people (admins and policy.approvers),
// with the old and the new definition side by side as text. The server
// passes CatalogDefinitions over its core as Options.Definitions
// (pkg/server/console.go); nil leaves the section out.

// HeldDefinition is one held tool definition as an approver reads it.
type HeldDefinition struct {
	ID     string
	Status string
	// Source is the source layer ("mcp/weather"); Tool the name it
	// publishes.
	Source, Tool string
	// Change is changed, added, first_sight or shadows; Shadowed the
	// source that pinned the same name (shadows).
	Change, Shadowed string
	// Fields are the parts of the definition that differ from the pin
	// (description, inputSchema, ...): all of them when never pinned.
	Fields []string
	// Old is the pinned definition ("" when never pinned); New is what
	// the source publishes now. Both are the canonical JSON, indented.
	Old, New  string
	SeenAt    time.Time
	DecidedBy string
	Reason    string
}

// Definitions lists and decides the held definitions as p may: admins and
// policy.approvers (core.ErrNotApprover otherwise).
type Definitions interface {
	HeldDefinitions(ctx context.Context, p *auth.Principal) ([]HeldDefinition, error)
	DecideDefinition(ctx context.Context, p *auth.Principal, id string, approve bool, reason string) error
}

// HeldCatalog is the core's side of the held definitions: *core.Core.
type HeldCatalog interface {
	HeldDefinitions(ctx context.Context, p *auth.Principal) ([]catalog.Held, error)
	DecideDefinition(ctx context.Context, p *auth.Principal, id string, approve bool, reason string) (catalog.Held, error)
}

var _ HeldCatalog = (*core.Core)(nil)

// CatalogDefinitions are the definitions c holds, as the console shows
// them; c checks who may read and decide them.
func CatalogDefinitions(c HeldCatalog) Definitions { return catalogDefinitions{c} }

type catalogDefinitions struct{ c HeldCatalog }

func (d catalogDefinitions) HeldDefinitions(ctx context.Context, p *auth.Principal) ([]HeldDefinition, error) {
	list, err := d.c.HeldDefinitions(ctx, p)
	if err != nil {
		return nil, err
	}
	out := make([]HeldDefinition, 0, len(list))
	for _, h := range list {
		out = append(out, heldDefinition(h))
	}
	return out, nil
}

func (d catalogDefinitions) DecideDefinition(ctx context.Context, p *auth.Principal, id string, approve bool, reason string) error {
	_, err := d.c.DecideDefinition(ctx, p, id, approve, reason)
	return err
}

func heldDefinition(h catalog.Held) HeldDefinition {
	v := HeldDefinition{ID: h.ID, Status: string(h.Status), Source: h.Source, Tool: h.Tool, Change: string(h.Change),
		Shadowed: h.Shadowed, New: pretty(string(h.New.Definition)), SeenAt: h.SeenAt, DecidedBy: h.DecidedBy, Reason: h.Reason}
	var old json.RawMessage
	if h.Old != nil {
		old, v.Old = h.Old.Definition, pretty(string(h.Old.Definition))
	}
	v.Fields = changedFields(old, h.New.Definition)
	return v
}

// changedFields are the fields of two canonical definitions whose values
// differ (canonical JSON: equal values are equal bytes), sorted: the
// description, the name, and each part (inputSchema, annotations, ...).
func changedFields(old, cur json.RawMessage) []string {
	a, b := definitionFields(old), definitionFields(cur)
	all := maps.Clone(b)
	maps.Copy(all, a)
	var out []string
	for _, k := range slices.Sorted(maps.Keys(all)) {
		if !bytes.Equal(a[k], b[k]) {
			out = append(out, k)
		}
	}
	return out
}

// definitionFields are a canonical definition's fields with its parts
// among them; none for "" (never pinned).
func definitionFields(def json.RawMessage) map[string]json.RawMessage {
	var m, parts map[string]json.RawMessage
	if json.Unmarshal(def, &m) != nil {
		return nil
	}
	if json.Unmarshal(m["parts"], &parts) == nil {
		delete(m, "parts")
		maps.Copy(m, parts)
	}
	return m
}
