package tool

import "context"

// EventKind says what an Event reports.
type EventKind uint8

// The event kinds a running tool can report.
const (
	EventProgress EventKind = iota + 1
	EventLog
	EventOutput
)

// Stream names where output bytes were written.
type Stream uint8

// The output streams.
const (
	Stdout Stream = iota + 1
	Stderr
)

// The log levels of Log, lowest first (the syslog names MCP uses).
const (
	LevelDebug     = "debug"
	LevelInfo      = "info"
	LevelNotice    = "notice"
	LevelWarning   = "warning"
	LevelError     = "error"
	LevelCritical  = "critical"
	LevelAlert     = "alert"
	LevelEmergency = "emergency"
)

// Event is something a tool reported while it ran. Which fields are set
// depends on Kind.
type Event struct {
	Kind EventKind

	// EventProgress: work done, total work (0 = unknown) and a note.
	Progress, Total float64
	Message         string

	// EventLog: level (LevelInfo...), the component that logged, and the
	// message — a string or any JSON-encodable value.
	Level, Logger string
	Data          any

	// EventOutput: the stream and its bytes. The bytes are only valid
	// during the Sink call; a sink that keeps them copies them.
	Stream Stream
	Bytes  []byte
}

// Sink receives a call's events. It may be called from several goroutines
// at once and must not block for long: the tool waits for it.
type Sink func(Event)

type sinkKey struct{}

// WithEvents returns a context whose tool reports its events to sink. A
// front-end that streams (gRPC ExecuteStream, /mcp with a progress token)
// attaches one; without it every report is a no-op that costs one context
// lookup and allocates nothing.
func WithEvents(ctx context.Context, sink Sink) context.Context {
	if sink == nil {
		return ctx
	}
	return context.WithValue(ctx, sinkKey{}, sink)
}

// Streaming reports whether ctx carries a sink, for a tool that would do
// extra work (formatting, a second pipe) only when someone listens.
func Streaming(ctx context.Context) bool { return SinkFrom(ctx) != nil }

// SinkFrom is the sink attached to ctx, or nil; for a source that relays
// events from elsewhere (an upstream MCP server's notifications).
func SinkFrom(ctx context.Context) Sink {
	s, _ := ctx.Value(sinkKey{}).(Sink)
	return s
}

// Progress reports how far the call has come: progress of total units
// (total 0 when unknown), with an optional note. Progress should increase
// along one call.
func Progress(ctx context.Context, progress, total float64, message string) {
	if s := SinkFrom(ctx); s != nil {
		s(Event{Kind: EventProgress, Progress: progress, Total: total, Message: message})
	}
}

// Log reports a log message at level (LevelInfo...) from logger (may be
// empty); data is a string or any JSON-encodable value. Passing a
// non-constant value as data converts it to an interface at the call site,
// which allocates even when nobody listens: guard expensive data with
// Streaming.
func Log(ctx context.Context, level, logger string, data any) {
	if s := SinkFrom(ctx); s != nil {
		s(Event{Kind: EventLog, Level: level, Logger: logger, Data: data})
	}
}

// Output reports bytes the tool produced as it ran (a command's stdout).
// The final Result still carries the whole output; these are the live view.
func Output(ctx context.Context, stream Stream, data []byte) {
	if len(data) == 0 {
		return
	}
	if s := SinkFrom(ctx); s != nil {
		s(Event{Kind: EventOutput, Stream: stream, Bytes: data})
	}
}
