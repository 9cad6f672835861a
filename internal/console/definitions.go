package console

import (
	"context"
	"time"

	"github.com/toolnexus/toolnexus/internal/auth"
)

// Held tool definitions (issue 49, pinning): a source whose tool
// definition changed, or that added a tool, has the new definition held
// until an approver approves it. ApprovalService lists them (kind
// "definition") with the old and the new text; the console shows them on
// /approvals below the held calls.
//
// HOOK: the catalog is not in this branch's core yet. Once it is, the
// server passes an adapter over core.HeldDefinitions and
// core.DecideDefinition as Options.Definitions (pkg/server/console.go,
// heldDefinitions); until then Definitions is nil and the section is not
// shown.

// HeldDefinition is one held tool definition as an approver reads it.
type HeldDefinition struct {
	ID     string
	Status string
	// Source is the source layer ("mcp/weather"); Tool the name it
	// publishes.
	Source, Tool string
	// Change is changed, added, first_sight or shadows.
	Change string
	// Old is the pinned definition ("" when never pinned); New is what
	// the source publishes now. Both are canonical JSON.
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
