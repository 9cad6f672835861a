package audit

import "context"

// EventDefinition is the event of a line recording a pinned tool
// definition that changed, or a decision on one (docs/catalog.md).
const EventDefinition = "definition"

// Definition is one held tool definition, or a decision on one.
type Definition struct {
	// ID is the held definition's id (def_...).
	ID     string
	Source string
	Tool   string
	// Change is changed, added, first_sight or shadows.
	Change string
	// Decision is "held" (hold mode), "served" (warn mode), "approved" or
	// "denied".
	Decision string
	// OldDigest and NewDigest are the pinned and the published
	// definition's SHA-256 (OldDigest empty for a tool never pinned).
	OldDigest, NewDigest string
	// Decider and Reason are the approver's, on a decision.
	Decider, Reason string
}

type definitionLine struct {
	Time      string `json:"time"`
	Event     string `json:"event"`
	ID        string `json:"definition"`
	Source    string `json:"source"`
	Tool      string `json:"tool"`
	Change    string `json:"change"`
	Decision  string `json:"decision"`
	OldDigest string `json:"old_digest,omitempty"`
	NewDigest string `json:"new_digest"`
	Decider   string `json:"decided_by,omitempty"`
	Reason    string `json:"reason,omitempty"`
	TraceID   string `json:"trace_id,omitempty"`
}

// DefinitionChanged records a held (or, in warn mode, served) definition,
// or an approver's decision on it. The texts are not written, only their
// digests: the pin store keeps them.
func (l *Log) DefinitionChanged(ctx context.Context, d Definition) {
	s := l.sink()
	if s == nil {
		return
	}
	line := definitionLine{Time: now(), Event: EventDefinition, ID: d.ID, Source: d.Source, Tool: d.Tool, Change: d.Change,
		Decision: d.Decision, OldDigest: d.OldDigest, NewDigest: d.NewDigest, Decider: d.Decider, Reason: d.Reason}
	line.TraceID, _ = traceIDs(ctx)
	l.emit(s, line)
}
