package audit

import (
	"context"
	"time"
)

// EventFeature is one request for an MCP server's resource, prompt or
// completion (resources/read, prompts/get, completion/complete,
// resources/subscribe and their gRPC RPCs).
const EventFeature = "feature"

// Feature is one finished feature request.
type Feature struct {
	// Method is the MCP method it amounts to, e.g. "resources/read".
	Method   string
	Protocol string
	// Principal is the caller's token name; "" when auth is off.
	Principal string
	Session   string
	// Target is the resource URI or prompt name as served.
	Target string
	// Source is the serving layer ("mcp/NAME"), "unknown" for a target
	// no server offers (or the caller may not see).
	Source   string
	Outcome  string
	Duration time.Duration
	// Bytes is the size of what was returned.
	Bytes int
}

type featureLine struct {
	Time       string  `json:"time"`
	Event      string  `json:"event"`
	Method     string  `json:"method"`
	Protocol   string  `json:"protocol"`
	Principal  string  `json:"principal"`
	Session    string  `json:"session"`
	Target     string  `json:"target"`
	Source     string  `json:"source"`
	Outcome    string  `json:"outcome"`
	DurationMS float64 `json:"duration_ms"`
	Bytes      int     `json:"bytes"`
	TraceID    string  `json:"trace_id,omitempty"`
}

// Feature records one feature request.
func (l *Log) Feature(ctx context.Context, f Feature) {
	s := l.sink()
	if s == nil {
		return
	}
	line := featureLine{Time: now(), Event: EventFeature, Method: f.Method, Protocol: f.Protocol, Principal: f.Principal,
		Session: f.Session, Target: f.Target, Source: f.Source, Outcome: f.Outcome,
		DurationMS: float64(f.Duration.Microseconds()) / 1000, Bytes: f.Bytes}
	line.TraceID, _ = traceIDs(ctx)
	l.emit(s, line)
}
