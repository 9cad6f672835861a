package tool

import "encoding/json"

// Annotations are hints about what a tool does (MCP tool annotations), for
// a client deciding whether to ask a person before a call. Hints only: a
// server may lie, and nothing here is enforced. A nil hint is unknown.
type Annotations struct {
	// Title is a human-readable name; may be empty.
	Title string
	// ReadOnly: the tool does not change its environment.
	ReadOnly *bool
	// Destructive: the tool may destroy or overwrite things.
	Destructive *bool
	// Idempotent: calling again with the same arguments has no further effect.
	Idempotent *bool
	// OpenWorld: the tool reaches an open world (the internet).
	OpenWorld *bool
}

// The hints toolnexus's own tools carry. Functions, so that no caller can
// change every tool's hints by writing through a shared pointer.

// ReadOnlyHints marks a tool that only reads.
func ReadOnlyHints() *Annotations {
	return &Annotations{ReadOnly: boolPtr(true), Destructive: boolPtr(false), OpenWorld: boolPtr(false)}
}

// DestructiveHints marks a tool that may change or destroy things.
func DestructiveHints() *Annotations {
	return &Annotations{ReadOnly: boolPtr(false), Destructive: boolPtr(true), OpenWorld: boolPtr(false)}
}

// OpenWorldHints marks a read-only tool that reaches the internet.
func OpenWorldHints() *Annotations {
	return &Annotations{ReadOnly: boolPtr(true), Destructive: boolPtr(false), OpenWorld: boolPtr(true)}
}

func boolPtr(b bool) *bool { return &b }

// WithAnnotations sets the tool's hints.
func WithAnnotations(a *Annotations) Option { return func(t *Tool) { t.Annotations = a } }

// WithOutputSchema sets the JSON Schema of the tool's structured results.
func WithOutputSchema(schema json.RawMessage) Option {
	return func(t *Tool) { t.OutputSchema = schema }
}
