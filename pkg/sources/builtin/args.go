package builtin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// decodeArgs decodes a call's arguments into v, refusing fields the schema
// does not list (every builtin schema says additionalProperties: false). A
// failure is returned as the result the tool should give, naming the field.
func decodeArgs(name string, c tool.Call, v any) *tool.Result {
	args := c.Arguments
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		return nil
	}
	msg := err.Error()
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field != "":
		msg = fmt.Sprintf("field %q must be %s, not %s", typeErr.Field, jsonType(typeErr.Type.Kind().String()), typeErr.Value)
	case errors.As(err, &typeErr):
		msg = "arguments must be a JSON object, not " + typeErr.Value
	case strings.HasPrefix(msg, "json: unknown field "):
		msg = "unknown field " + strings.TrimPrefix(msg, "json: unknown field ") + "; see the tool's input schema"
	default:
		msg = strings.TrimPrefix(msg, "json: ")
	}
	return invalid(name + ": invalid arguments: " + msg)
}

func jsonType(goKind string) string {
	switch {
	case strings.HasPrefix(goKind, "int"), strings.HasPrefix(goKind, "uint"):
		return "an integer"
	case strings.HasPrefix(goKind, "float"):
		return "a number"
	case goKind == "bool":
		return "a boolean"
	case goKind == "string":
		return "a string"
	case goKind == "slice", goKind == "array":
		return "an array"
	}
	return "an object"
}

// invalid is the result for arguments the tool cannot work with.
func invalid(msg string) *tool.Result {
	r := tool.FailureWith(tool.OutcomeInvalidArguments, msg)
	return &r
}

// fail is a plain tool failure.
func fail(format string, a ...any) tool.Result {
	return tool.Failure(fmt.Sprintf(format, a...), nil)
}
