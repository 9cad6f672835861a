package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/toolnexus/toolnexus/internal/strictjson"
)

// NativeFunc is a plain Go function exposed as a tool.
type NativeFunc func(ctx context.Context, args map[string]any) (any, error)

// Native wraps a plain Go function. What it returns becomes the result:
// a string is the output as is, nil an empty output, a Result passes through
// untouched, any other value is rendered as JSON; a returned error is a
// failure with the error's text.
func Native(name string, fn NativeFunc, opts ...Option) (Tool, error) {
	if fn == nil {
		return New(name, nil, opts...)
	}
	return New(name, func(ctx context.Context, call Call) Result {
		var args map[string]any
		if err := decodeStrict(call.Arguments, &args); err != nil {
			return FailureWith(OutcomeInvalidArguments, err.Error())
		}
		if args == nil {
			args = map[string]any{}
		}
		return valueResult(fn(ctx, args))
	}, opts...)
}

// Typed wraps a Go function whose arguments decode into T. The input schema
// is derived from T (see SchemaFor), unless WithInputSchema overrides it.
// Arguments that do not decode into T are a failure naming the field.
func Typed[T any](name string, fn func(ctx context.Context, args T) (any, error), opts ...Option) (Tool, error) {
	if fn == nil {
		return New(name, nil, opts...)
	}
	schema, err := SchemaFor[T]()
	if err != nil {
		return Tool{}, fmt.Errorf("tool %q: %w", name, err)
	}
	opts = append([]Option{WithInputSchema(schema)}, opts...)
	return New(name, func(ctx context.Context, call Call) Result { return RunTyped(ctx, call, fn) }, opts...)
}

// RunTyped runs fn on the call's arguments decoded into T, exactly as a
// Typed tool runs its function: arguments that do not decode are invalid
// arguments naming the field, and the value fn returns becomes the result.
// It is for a caller that hands fn more than the call itself (the core's
// own code-mode tools also get the call they run for).
func RunTyped[T any](ctx context.Context, call Call, fn func(ctx context.Context, args T) (any, error)) Result {
	var args T
	if err := decodeStrict(call.Arguments, &args); err != nil {
		return FailureWith(OutcomeInvalidArguments, err.Error())
	}
	return valueResult(fn(ctx, args))
}

func valueResult(v any, err error) Result {
	if err != nil {
		return Failure(err.Error(), nil)
	}
	switch out := v.(type) {
	case nil:
		return Success("", nil)
	case string:
		return Success(out, nil)
	case Result:
		return out
	case *Result:
		if out == nil {
			return Success("", nil)
		}
		return *out
	}
	b, err := json.Marshal(v)
	if err != nil {
		return Failure("tool returned a value that is not JSON-encodable: "+err.Error(), nil)
	}
	return Success(string(b), nil)
}

// decodeStrict decodes args into v, rejecting unknown fields (the derived
// schema says additionalProperties: false) and naming the offending field.
func decodeStrict(args json.RawMessage, v any) error {
	err := strictjson.Decode(args, v)
	var se *strictjson.Error
	if !errors.As(err, &se) {
		return err
	}
	switch se.Kind {
	case strictjson.WrongType:
		got := se.Got
		if got == "bool" { // encoding/json's word; the schema says boolean
			got = "boolean"
		}
		if se.Field == "" {
			return fmt.Errorf("invalid arguments: expected a JSON object, got %s", got)
		}
		return fmt.Errorf("invalid arguments: field %q: expected %s, got %s", se.Field, se.Want, got)
	case strictjson.UnknownField:
		return fmt.Errorf("invalid arguments: unknown field %q", se.Field)
	case strictjson.Trailing:
		return errors.New("invalid arguments: unexpected data after the arguments object")
	}
	return fmt.Errorf("invalid arguments: %s", se.Detail)
}
