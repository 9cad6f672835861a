package catalog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"
)

// Pin is the definition trusted for one tool of one source.
type Pin struct {
	// Name is the tool's name as its source publishes it (before any
	// override renames it).
	Name string `json:"name"`
	// Digest is Digest(Definition).
	Digest string `json:"digest"`
	// Definition is the canonical definition (Definition.Canonical).
	Definition json.RawMessage `json:"definition"`
	// At is when it was pinned; By who pinned it: FirstSight, or the
	// approver.
	At time.Time `json:"at"`
	By string    `json:"by"`
}

// FirstSight is Pin.By of a definition trusted when its source was first
// seen (trust on first use).
const FirstSight = "first sight"

// Change says why a definition is held.
type Change string

// The changes.
const (
	// Changed: the source changed a pinned definition.
	Changed Change = "changed"
	// Added: a source already seen offers a tool it did not offer before.
	Added Change = "added"
	// FirstSeen: a source seen for the first time, with
	// pinning.holdFirstSight.
	FirstSeen Change = "first_sight"
	// Shadows: a source seen for the first time offers a name another
	// source has pinned (it would shadow, or be shadowed by, a trusted tool).
	Shadows Change = "shadows"
)

// Status is where a held definition stands.
type Status string

// The statuses.
const (
	Pending  Status = "pending"
	Approved Status = "approved"
	Denied   Status = "denied"
)

// Held is a definition a source publishes that does not match its pin,
// waiting for an approver (pinning.mode "warn": served meanwhile). There is
// at most one per source and tool: a later change of the same tool
// replaces it, so what an approver reads is the latest text.
type Held struct {
	// ID is "def_" and 32 hex digits of the SHA-256 of source, tool and
	// new digest: the same on every replica, and another one as soon as
	// the text changes again, so an approval covers exactly what the
	// approver read.
	ID     string `json:"id"`
	Source string `json:"source"`
	Tool   string `json:"tool"`
	Change Change `json:"change"`
	// Old is the pinned definition (nil for a tool never pinned in this
	// source); New is what the source publishes now.
	Old *Pin `json:"old,omitempty"`
	New Pin  `json:"new"`
	// Shadowed names the source that pinned the same name (Change Shadows).
	Shadowed  string    `json:"shadowed,omitempty"`
	Status    Status    `json:"status"`
	SeenAt    time.Time `json:"seenAt"`
	DecidedBy string    `json:"decidedBy,omitempty"`
	DecidedAt time.Time `json:"decidedAt,omitzero"`
	Reason    string    `json:"reason,omitempty"`
}

// HeldID is the id of the request to pin digest for tool in source.
func HeldID(source, tool, digest string) string {
	h := sha256.New()
	for _, s := range []string{source, tool, digest} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return IDPrefix + hex.EncodeToString(h.Sum(nil)[:16])
}

// IDPrefix starts the id of every held definition, so ApprovalService can
// tell it from a call's approval (apr_...).
const IDPrefix = "def_"

// Decision is an approver's answer to a held definition.
type Decision struct {
	Approve bool
	By      string
	Reason  string
	At      time.Time
}

// The ways a decision is refused.
var (
	ErrUnknown = errors.New("no such held definition (a later change of the same tool replaces it: list the approvals again)")
	ErrDecided = errors.New("the held definition has already been decided")
)

// Store keeps the pins and the held definitions where they survive a
// restart: a directory (NewFileStore) or, with cluster.redis, Redis, which
// every replica shares. Every implementation passes the contract in
// package pintest.
type Store interface {
	// Layer returns the pins of source by tool name, and whether source
	// was ever seen (published at least one tool).
	Layer(ctx context.Context, source string) (pins map[string]Pin, seen bool, err error)
	// Trust pins each of pins whose name has no pin in source yet, marks
	// source seen, and returns the pins in force for those names
	// afterwards: of two replicas trusting at once, the first pin wins.
	Trust(ctx context.Context, source string, pins []Pin) (map[string]Pin, error)
	// PinnedElsewhere returns, for those of names some source other than
	// source has pinned, that source's name.
	PinnedElsewhere(ctx context.Context, source string, names []string) (map[string]string, error)
	// Hold records h as the one request of its source and tool. A request
	// with h's id already there is kept as it is (a denied definition
	// stays denied); another one is replaced. It returns the stored one.
	Hold(ctx context.Context, h Held) (Held, error)
	// Withdraw drops the pending request id (its source went back to the
	// pinned definition); anything else is left alone.
	Withdraw(ctx context.Context, id string) error
	// List returns every request, newest first.
	List(ctx context.Context) ([]Held, error)
	// Decide approves a pending request (its New becomes the source's pin
	// for the tool, and the source counts as seen) or denies it.
	Decide(ctx context.Context, id string, d Decision) (Held, error)
}
