package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolnexus/toolnexus/internal/panics"
)

// DefaultSource is the source label of a tool built without WithSource.
const DefaultSource = "custom"

// DefaultInputSchema returns the input schema of a tool built without
// WithInputSchema: any object. A function, not a variable, so that no caller
// can change every such tool's schema by assigning to it.
func DefaultInputSchema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }

// Func runs one call. It returns a failure Result rather than an error, and
// should stop promptly when ctx is done.
type Func func(ctx context.Context, call Call) Result

// Call is one invocation as the model made it.
type Call struct {
	// Name is the tool name as called.
	Name string
	// Arguments is the arguments object as JSON text. It is never empty:
	// a call without arguments carries "{}". It is read-only: it may share
	// memory with the request it was decoded from (a tool that needs to
	// change it works on a copy).
	Arguments json.RawMessage
	// Answer is set when the call resumes an earlier OutcomePending result.
	Answer *Answer
	// Owner is who made the call. A tool that keeps a suspended call open
	// between two requests gives its answer only to the same owner.
	Owner Owner
}

// Owner names the caller of one call: its principal (the token name, "" when
// auth is off) and its session id ("" for none). Plain strings, so setting
// it costs the call path nothing.
type Owner struct {
	Principal string
	Session   string
}

// Decode unmarshals the arguments into v.
func (c Call) Decode(v any) error {
	if len(c.Arguments) == 0 {
		return json.Unmarshal([]byte("{}"), v)
	}
	return json.Unmarshal(c.Arguments, v)
}

// Tool is one callable tool. Build it with New (or Native/Typed) so the
// defaults are filled in; treat a registered Tool as read-only.
type Tool struct {
	// Name is what the model calls the tool by.
	Name string
	// Description tells the model what the tool does.
	Description string
	// InputSchema is the JSON Schema of the arguments object.
	InputSchema json.RawMessage
	// Source labels where the tool came from; metrics break down by it.
	Source string
	// Annotations are hints about what the tool does; nil when unknown.
	Annotations *Annotations
	// OutputSchema is the JSON Schema of Result.StructuredContent, when
	// the tool declares one; nil otherwise.
	OutputSchema json.RawMessage
	// Run executes a call. Prefer Tool.Execute, which also contains panics.
	Run Func
}

// Option configures New.
type Option func(*Tool)

// WithDescription sets the description.
func WithDescription(d string) Option { return func(t *Tool) { t.Description = d } }

// WithInputSchema sets the JSON Schema of the arguments object.
func WithInputSchema(schema json.RawMessage) Option {
	return func(t *Tool) { t.InputSchema = schema }
}

// WithSource sets the source label.
func WithSource(source string) Option { return func(t *Tool) { t.Source = source } }

// ErrNoName and ErrNoFunc are returned by New for an incomplete tool.
var (
	ErrNoName = errors.New("tool: name is required")
	ErrNoFunc = errors.New("tool: execute function is required")
)

// New builds a tool: name and fn are required; the description defaults to
// "", the input schema to {"type":"object"} and the source to "custom". The
// name is used exactly as written.
func New(name string, fn Func, opts ...Option) (Tool, error) {
	t := Tool{Name: name, Run: fn}
	for _, o := range opts {
		o(&t)
	}
	if err := t.Normalize(); err != nil {
		return Tool{}, err
	}
	return t, nil
}

// Must is New that panics on error, for package-level tool tables.
func Must(t Tool, err error) Tool {
	if err != nil {
		panic(err)
	}
	return t
}

// Normalize checks the required fields and fills in the defaults. A schema
// that is not valid JSON is an error naming the tool.
func (t *Tool) Normalize() error {
	if t.Name == "" {
		return ErrNoName
	}
	if t.Run == nil {
		return fmt.Errorf("%w (tool %q)", ErrNoFunc, t.Name)
	}
	if len(t.InputSchema) == 0 {
		t.InputSchema = DefaultInputSchema()
	} else if !json.Valid(t.InputSchema) {
		return fmt.Errorf("tool %q: input schema is not valid JSON", t.Name)
	}
	if t.Source == "" {
		t.Source = DefaultSource
	}
	return nil
}

// Execute runs the call and turns a panic into a failure whose output is the
// panic message (OutcomePanic); the stack goes to the log, never to the model.
func (t *Tool) Execute(ctx context.Context, call Call) (res Result) {
	if len(call.Arguments) == 0 {
		call.Arguments = emptyObject
	}
	defer func() {
		if v := recover(); v != nil {
			res = panicResult(t.Name, v)
		}
	}()
	return t.Run(ctx, call)
}

var emptyObject = json.RawMessage("{}")

// panicResult is the failure a panic becomes: its message as output
// (OutcomePanic), the stack to the default logger, never to the model.
// Runners with their own logger recover before this one does.
func panicResult(name string, v any) Result {
	return FailureWith(OutcomePanic, panics.Log(nil, name, v))
}
