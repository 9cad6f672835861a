package audit

import "context"

// EventApproval is the event of a line recording an approval decision.
const EventApproval = "approval"

// Approval is one decision on a pending approval.
type Approval struct {
	ID string
	// Decider is the principal who approved or denied.
	Decider string
	// Requester is the principal whose call it was.
	Requester string
	Tool      string
	Policy    string
	// Digest is the SHA-256 of the call's canonical arguments.
	Digest   string
	Approved bool
	Reason   string
}

type approvalLine struct {
	Time      string `json:"time"`
	Event     string `json:"event"`
	ID        string `json:"approval"`
	Decision  string `json:"decision"`
	Decider   string `json:"decided_by"`
	Requester string `json:"principal"`
	Tool      string `json:"tool"`
	Policy    string `json:"policy"`
	Digest    string `json:"arguments_digest"`
	Reason    string `json:"reason,omitempty"`
	TraceID   string `json:"trace_id,omitempty"`
}

// ApprovalDecided records who approved or denied which call.
func (l *Log) ApprovalDecided(ctx context.Context, a Approval) {
	s := l.sink()
	if s == nil {
		return
	}
	line := approvalLine{Time: now(), Event: EventApproval, ID: a.ID, Decision: "denied", Decider: a.Decider,
		Requester: a.Requester, Tool: a.Tool, Policy: a.Policy, Digest: a.Digest, Reason: a.Reason}
	if a.Approved {
		line.Decision = "approved"
	}
	line.TraceID, _ = traceIDs(ctx)
	l.emit(s, line)
}
