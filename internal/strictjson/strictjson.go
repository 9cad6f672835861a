// Package strictjson decodes JSON into Go values refusing unknown fields and
// trailing data, and reports a failure as a typed *Error so that each
// caller can word it for its own reader (a config author, a model) without
// parsing encoding/json's messages.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
)

// Kind says what was wrong.
type Kind int

// The kinds of failure.
const (
	// Syntax: not well-formed JSON, or another decoder error (Detail).
	Syntax Kind = iota
	// UnknownField: Field is not a field of the target.
	UnknownField
	// WrongType: Field (empty for the top-level value) holds Got where Want
	// was expected.
	WrongType
	// Trailing: more data follows the value.
	Trailing
)

// Error is a decoding failure.
type Error struct {
	Kind Kind
	// Field is the dotted path of the field at fault, empty for the value
	// as a whole.
	Field string
	// Want is the JSON Schema type expected: "integer", "number",
	// "boolean", "string", "array" or "object".
	Want string
	// Got is the JSON kind found: "string", "number", "bool", "array",
	// "object" or "null".
	Got string
	// Detail is the decoder's own text for a Syntax error.
	Detail string
}

func (e *Error) Error() string {
	switch e.Kind {
	case UnknownField:
		return "unknown field " + `"` + e.Field + `"`
	case WrongType:
		if e.Field == "" {
			return "expected " + e.Want + ", got " + e.Got
		}
		return "field " + `"` + e.Field + `"` + ": expected " + e.Want + ", got " + e.Got
	case Trailing:
		return "unexpected data after the value"
	}
	return e.Detail
}

// Decode decodes raw into v. Empty raw decodes as {}. An object key must
// name a field exactly: encoding/json would also take "Command" or
// "COMMAND" for a field named "command", which lets a caller hide a member
// from whatever judged the call by its exact name; such a key is an
// UnknownField.
func Decode(raw []byte, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw)) // reads raw in place: no copy
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return describe(err)
	}
	// A Decoder stops after one value; json.Unmarshal rejects anything
	// after it, and so must this.
	if _, err := dec.Token(); err != io.EOF {
		return &Error{Kind: Trailing}
	}
	if t := reflect.TypeOf(v); t != nil && hasStruct(t) {
		return exactKeys(raw, t)
	}
	return nil
}

func describe(err error) *Error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return &Error{Kind: WrongType, Field: te.Field, Want: schemaType(te.Type.Kind().String()), Got: te.Value}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		// The Decoder's word for what json.Unmarshal calls this.
		return &Error{Kind: Syntax, Detail: "unexpected end of JSON input"}
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return &Error{Kind: UnknownField, Field: strings.Trim(f, `"`)}
	}
	return &Error{Kind: Syntax, Detail: strings.TrimPrefix(msg, "json: ")}
}

// schemaType names a Go kind by the JSON Schema type that decodes into it.
func schemaType(goKind string) string {
	switch {
	case strings.HasPrefix(goKind, "int"), strings.HasPrefix(goKind, "uint"):
		return "integer"
	case strings.HasPrefix(goKind, "float"):
		return "number"
	case goKind == "bool":
		return "boolean"
	case goKind == "string":
		return "string"
	case goKind == "slice", goKind == "array":
		return "array"
	}
	return "object"
}
