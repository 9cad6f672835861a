// Package audit writes the audit trail: one JSON object per line for every
// tool call (Execute, ExecuteStream, MCP tools/call), every reload and
// every session deletion — who, what, when, how it ended and the trace it
// belongs to.
//
// A line never holds a secret: no bearer token, no header value, and no
// call arguments unless audit.arguments is true (their size and SHA-256
// are always there, so a call can be matched to what the agent sent).
//
// The file is opened once, in append mode, and reopened on every reload
// (SIGHUP, SourceService.Reload, a watched config change), so logrotate's
// "rename, then signal" works without copytruncate. Writing takes no lock
// of ours: each line is one write(2) on an O_APPEND file.
package audit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/toolnexus/toolnexus/internal/config"
)

// Event kinds, the "event" field of a line.
const (
	EventExecute       = "execute"
	EventReload        = "reload"
	EventSessionDelete = "session_delete"
)

// Log is the audit log. The zero value is not usable; make one with New.
// Every method is safe for concurrent use and a no-op while the log is off.
type Log struct {
	stderr io.Writer
	cur    atomic.Pointer[sink] // nil = off
	mu     sync.Mutex           // serialises Configure / Prepare+Commit / Close
	recent ring                 // the newest call lines (recent.go)
}

// sink is where lines go right now.
type sink struct {
	w         io.Writer
	file      *os.File // nil for stderr
	path      string
	arguments bool
}

// New makes a log that is off until Configure; stderr is where lines go
// when audit.path is empty (os.Stderr when nil).
func New(stderr io.Writer) *Log {
	if stderr == nil {
		stderr = os.Stderr
	}
	return &Log{stderr: stderr}
}

// On reports whether lines are being written.
func (l *Log) On() bool { return l.sink() != nil }

func (l *Log) sink() *sink {
	if l == nil {
		return nil
	}
	return l.cur.Load()
}

// Next is a prepared configuration: the file already open. Commit it, or
// Discard it when the change it belongs to is abandoned.
type Next struct{ s *sink }

// Discard closes the file a Prepare opened.
func (n Next) Discard() {
	if n.s != nil && n.s.file != nil {
		_ = n.s.file.Close()
	}
}

// Prepare opens what cfg asks for (path is audit.path resolved; empty =
// stderr) without switching to it yet. A file that cannot be opened is a
// *config.Error naming audit.path.
func (l *Log) Prepare(cfg config.Audit, path string) (Next, error) {
	if !cfg.Enabled {
		return Next{}, nil
	}
	s := &sink{w: l.stderr, path: path, arguments: cfg.Arguments}
	if path != "" {
		f, err := openFile(path)
		if err != nil {
			return Next{}, &config.Error{Key: "audit.path", Msg: fmt.Sprintf("cannot open %s for appending: %v", path, errors.Unwrap(err))}
		}
		s.w, s.file = f, f
	}
	return Next{s: s}, nil
}

// Commit switches to a prepared configuration and closes the file it
// replaces; lines being written to that file at this moment are retried on
// the new one.
func (l *Log) Commit(n Next) {
	l.mu.Lock()
	defer l.mu.Unlock()
	old := l.cur.Swap(n.s)
	if old != nil && old.file != nil {
		_ = old.file.Close()
	}
}

// Configure is Prepare then Commit.
func (l *Log) Configure(cfg config.Audit, path string) error {
	n, err := l.Prepare(cfg, path)
	if err != nil {
		return err
	}
	l.Commit(n)
	return nil
}

// Reopen opens the current file anew (after it was rotated away).
func (l *Log) Reopen() error {
	l.mu.Lock()
	cur := l.cur.Load()
	l.mu.Unlock()
	if cur == nil || cur.file == nil {
		return nil
	}
	f, err := openFile(cur.path)
	if err != nil {
		return err
	}
	l.Commit(Next{s: &sink{w: f, file: f, path: cur.path, arguments: cur.arguments}})
	return nil
}

// Close stops the log and closes its file.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	old := l.cur.Swap(nil)
	if old != nil && old.file != nil {
		return old.file.Close()
	}
	return nil
}

func openFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
}

// write puts one line out: one Write call, so concurrent lines never
// interleave. A write that loses the race with a reopen is retried on the
// new file (each retry means another reopen happened meanwhile, so this
// ends as soon as reopens pause).
func (l *Log) write(s *sink, line []byte) {
	for {
		_, err := s.w.Write(line)
		if err == nil || !errors.Is(err, os.ErrClosed) {
			return
		}
		if s = l.cur.Load(); s == nil {
			return
		}
	}
}

// Call is one finished tool call.
type Call struct {
	// Method is how the call came in: "Execute", "ExecuteStream" (gRPC)
	// or "tools/call" (MCP).
	Method   string
	Protocol string
	// Principal is the caller's token name; "" when auth is off.
	Principal string
	Session   string
	Tool      string
	Source    string
	CallID    string
	Outcome   string
	IsError   bool
	Duration  time.Duration
	Arguments []byte
}

// callFacts is who called which tool how, and how it ended: the part of a
// call line that the file (callLine) and the console (Recorded) both show,
// written once so the two cannot drift apart. Embedded, its fields keep
// their place in the JSON line.
type callFacts struct {
	Method    string `json:"method"`
	Protocol  string `json:"protocol"`
	Principal string `json:"principal"`
	Session   string `json:"session"`
	Tool      string `json:"tool"`
	Source    string `json:"source"`
	CallID    string `json:"call_id,omitempty"`
	Outcome   string `json:"outcome"`
	IsError   bool   `json:"is_error"`
}

type callLine struct {
	Time  string `json:"time"`
	Event string `json:"event"`
	callFacts
	DurationMS     float64         `json:"duration_ms"`
	ArgumentBytes  int             `json:"argument_bytes"`
	ArgumentSHA256 string          `json:"argument_sha256"`
	Arguments      json.RawMessage `json:"arguments,omitempty"`
	TraceID        string          `json:"trace_id,omitempty"`
	SpanID         string          `json:"span_id,omitempty"`
}

// Execute records one tool call; ctx carries its span (for the trace id).
func (l *Log) Execute(ctx context.Context, c Call) {
	s := l.sink()
	if s == nil {
		return
	}
	args := c.Arguments
	if len(args) == 0 {
		args = []byte("{}")
	}
	sum := sha256.Sum256(args)
	line := &callLine{
		Time: now(), Event: EventExecute, callFacts: callFacts{Method: c.Method, Protocol: c.Protocol, Principal: c.Principal,
			Session: c.Session, Tool: c.Tool, Source: c.Source, CallID: c.CallID, Outcome: c.Outcome, IsError: c.IsError},
		DurationMS:    float64(c.Duration.Microseconds()) / 1000,
		ArgumentBytes: len(c.Arguments), ArgumentSHA256: hex.EncodeToString(sum[:]),
	}
	if s.arguments {
		if json.Valid(args) {
			line.Arguments = args
		} else {
			q, _ := json.Marshal(string(args))
			line.Arguments = q
		}
	}
	line.TraceID, line.SpanID = traceIDs(ctx)
	l.emit(s, line)
	l.recent.add(line)
}

// Reload is one reload attempt.
type Reload struct {
	// Principal is the admin token's name for SourceService.Reload; ""
	// for a signal or a watched file.
	Principal string
	// Trigger is "rpc", "signal" or "watch".
	Trigger  string
	Err      error
	Revision uint64
	Rebuilt  []string
	Removed  []string
	Failed   []string
}

type reloadLine struct {
	Time      string   `json:"time"`
	Event     string   `json:"event"`
	Principal string   `json:"principal"`
	Trigger   string   `json:"trigger"`
	Outcome   string   `json:"outcome"`
	Error     string   `json:"error,omitempty"`
	Revision  uint64   `json:"revision,omitempty"`
	Rebuilt   []string `json:"rebuilt,omitempty"`
	Removed   []string `json:"removed,omitempty"`
	Failed    []string `json:"failed,omitempty"`
	TraceID   string   `json:"trace_id,omitempty"`
}

// Reload records a reload, applied or rejected. The error text is a config
// error's (it names keys and variables, never their values).
func (l *Log) Reload(ctx context.Context, r Reload) {
	s := l.sink()
	if s == nil {
		return
	}
	line := reloadLine{Time: now(), Event: EventReload, Principal: r.Principal, Trigger: r.Trigger, Outcome: "ok",
		Revision: r.Revision, Rebuilt: r.Rebuilt, Removed: r.Removed, Failed: r.Failed}
	if r.Err != nil {
		line.Outcome, line.Error = "error", r.Err.Error()
	}
	line.TraceID, _ = traceIDs(ctx)
	l.emit(s, line)
}

type sessionLine struct {
	Time      string `json:"time"`
	Event     string `json:"event"`
	Principal string `json:"principal"`
	Session   string `json:"session"`
	Reason    string `json:"reason"`
	TraceID   string `json:"trace_id,omitempty"`
}

// SessionDeleted records the deletion of a session's workspace.
// principal is who asked ("" for the server itself); reason says why, e.g.
// "request" (DeleteSession), "expired" (the TTL), "shutdown".
func (l *Log) SessionDeleted(ctx context.Context, principal, session, reason string) {
	s := l.sink()
	if s == nil {
		return
	}
	line := sessionLine{Time: now(), Event: EventSessionDelete, Principal: principal, Session: session, Reason: reason}
	line.TraceID, _ = traceIDs(ctx)
	l.emit(s, line)
}

func (l *Log) emit(s *sink, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return // every field is a string, number or raw JSON checked valid
	}
	l.write(s, append(b, '\n'))
}

func now() string { return time.Now().UTC().Format(time.RFC3339Nano) }

func traceIDs(ctx context.Context) (string, string) {
	if ctx == nil {
		return "", ""
	}
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return "", ""
	}
	return sc.TraceID().String(), sc.SpanID().String()
}
