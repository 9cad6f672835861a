package core

import (
	"context"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolnexus/toolnexus/internal/audit"
	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/catalog"
	"github.com/toolnexus/toolnexus/internal/catalog/redispins"
	"github.com/toolnexus/toolnexus/internal/cluster"
	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/policy"
)

// newCatalog makes the catalog every source publishes through (pinning
// and overrides; the engine configures it on every Apply) with its pin
// store: Redis with cluster.redis, else pinning.dir, else none (pinning
// cannot be turned on without a restart then).
func (c *Core) newCatalog(cfg *config.Config, cl *cluster.Client, reg prometheus.Registerer, kinds []string) error {
	var store catalog.Store
	dir, err := cfg.PinningDir()
	switch {
	case err != nil:
		return err
	case cl != nil:
		store = redispins.New(cl)
	case dir != "":
		if store, err = catalog.NewFileStore(dir); err != nil {
			return &config.Error{Key: "pinning.dir", Msg: "the pins cannot be kept there: " + err.Error()}
		}
	}
	c.pinsDir = dir
	c.catalog = catalog.New(c.reg, catalog.Options{Store: store, Logger: c.log, Metrics: reg, Sources: kinds,
		OnChange: func(h catalog.Held, served bool) {
			decision := "held"
			if served {
				decision = "served"
			}
			c.audit.DefinitionChanged(context.Background(), definitionAudit(h, decision))
		}})
	return nil
}

func definitionAudit(h catalog.Held, decision string) audit.Definition {
	d := audit.Definition{ID: h.ID, Source: h.Source, Tool: h.Tool, Change: string(h.Change), Decision: decision,
		NewDigest: h.New.Digest, Decider: h.DecidedBy, Reason: h.Reason}
	if h.Old != nil {
		d.OldDigest = h.Old.Digest
	}
	return d
}

// checkPinning refuses a reload the catalog cannot follow: the pins' place
// is chosen at start.
func (c *Core) checkPinning(next *config.Config) error {
	dir, err := next.PinningDir()
	if err != nil {
		return err
	}
	if dir != c.pinsDir && c.cluster == nil {
		return &config.Error{Key: "pinning.dir", Msg: "changing where the pins are kept needs a restart"}
	}
	if next.Pinning.On() && c.catalog.Store() == nil {
		return &config.Error{Key: "pinning.mode", Msg: "turning pinning on needs a restart (no pin store was opened at start)"}
	}
	return nil
}

// mayDecideDefinitions reports whether p may list and decide held tool
// definitions: admins and policy.approvers, whether or not policy files
// are set. With auth off nobody may: every caller, a model's shell
// included, is the same anonymous principal.
func (c *Core) mayDecideDefinitions(p *auth.Principal) bool {
	if p == nil {
		return false
	}
	return p.Admin || policy.IsApprover(c.cfg.Load().Policy.Approvers, p.Name, p.Groups)
}

// HeldDefinitions lists the tool definitions pinning holds back, pending
// and decided, newest first, each with the pinned and the new text: what
// ApprovalService.ListApprovals shows as kind "definition", and what a
// console shows an approver.
func (c *Core) HeldDefinitions(ctx context.Context, p *auth.Principal) ([]catalog.Held, error) {
	if !c.mayDecideDefinitions(p) {
		return nil, ErrNotApprover
	}
	return c.catalog.List(ctx)
}

// DecideDefinition approves (pins the new definition: the tool is listed
// and runs at once) or denies (it stays held) a held definition as p, and
// records the decision in the audit log. Errors: ErrNotApprover,
// catalog.ErrUnknown, catalog.ErrDecided.
func (c *Core) DecideDefinition(ctx context.Context, p *auth.Principal, id string, approve bool, reason string) (catalog.Held, error) {
	if !c.mayDecideDefinitions(p) {
		return catalog.Held{}, ErrNotApprover
	}
	h, err := c.catalog.Decide(ctx, id, approve, p.Name, reason)
	if err != nil {
		return h, err
	}
	c.audit.DefinitionChanged(ctx, definitionAudit(h, string(h.Status)))
	c.log.LogAttrs(ctx, slog.LevelInfo, "tool definition decided", slog.String("definition", h.ID), slog.String("decided_by", p.Name),
		slog.String("status", string(h.Status)), slog.String("source", h.Source), slog.String("tool", h.Tool))
	return h, nil
}
