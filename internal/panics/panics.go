// Package panics renders a recovered panic for the failure result a model
// reads. Every runner that recovers (a tool's Execute, the registry, the
// core's call path, the front-ends' guards) goes through here, so a panic
// reads and logs the same wherever it is caught.
package panics

import (
	"fmt"
	"log/slog"
	"runtime/debug"
)

// Message renders a recovered panic value: an error's text, a string as
// is, anything else through fmt.
func Message(v any) string {
	switch p := v.(type) {
	case error:
		return p.Error()
	case string:
		return p
	default:
		return fmt.Sprint(p)
	}
}

// Log logs a recovered panic with its stack to log (slog.Default when nil)
// and returns its message: the output of the failure result the model sees
// (OutcomePanic). The stack goes to the log only, never to the model.
func Log(log *slog.Logger, name string, v any) string {
	if log == nil {
		log = slog.Default()
	}
	msg := Message(v)
	log.Error("tool panicked", "tool", name, "panic", msg, "stack", string(debug.Stack()))
	return msg
}

// Stack is the current goroutine's stack, for a log record.
func Stack() string { return string(debug.Stack()) }
