package builtin

import (
	"errors"
	"fmt"

	"github.com/toolnexus/toolnexus/internal/strictjson"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// decodeArgs decodes a call's arguments into v, refusing fields the schema
// does not list (every builtin schema says additionalProperties: false). A
// failure is returned as the result the tool should give, naming the field.
func decodeArgs(name string, c tool.Call, v any) *tool.Result {
	err := strictjson.Decode(c.Arguments, v)
	if err == nil {
		return nil
	}
	var msg string
	var se *strictjson.Error
	switch {
	case !errors.As(err, &se):
		msg = err.Error()
	case se.Kind == strictjson.WrongType && se.Field != "":
		msg = fmt.Sprintf("field %q must be %s, not %s", se.Field, article(se.Want), se.Got)
	case se.Kind == strictjson.WrongType:
		msg = "arguments must be a JSON object, not " + se.Got
	case se.Kind == strictjson.UnknownField:
		msg = fmt.Sprintf("unknown field %q; see the tool's input schema", se.Field)
	case se.Kind == strictjson.Trailing:
		msg = "unexpected data after the arguments object"
	default:
		msg = se.Detail
	}
	return invalid(name + ": invalid arguments: " + msg)
}

// article puts "a" or "an" before a JSON Schema type name.
func article(schemaType string) string {
	if schemaType == "integer" || schemaType == "array" || schemaType == "object" {
		return "an " + schemaType
	}
	return "a " + schemaType
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

// escaped is the failure for a path that leaves the workspace, marked as
// the sandbox refusal it is (toolnexus_sandbox_refusals_total).
func escaped(format string, a ...any) tool.Result {
	return fail(format, a...).Refused(tool.RefusalPathEscape)
}
