// Package field reads the JSON objects of a source's config section and
// reports problems as typed errors that carry the key at fault. A source
// returns keys relative to its section ("fs.command"); the config loader
// puts the section in front ("mcpServers.fs.command") without ever parsing
// an error's text.
package field

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Error is a config problem: the key path at fault (relative to whoever
// returns it; empty for the value as a whole) and what to do about it.
type Error struct {
	Key string
	Msg string
}

func (e *Error) Error() string {
	if e.Key == "" {
		return e.Msg
	}
	return e.Key + ": " + e.Msg
}

// Errorf makes an *Error for key.
func Errorf(key, format string, args ...any) error {
	return &Error{Key: key, Msg: fmt.Sprintf(format, args...)}
}

// Join appends a key path to a parent: Join("fs", "command") is
// "fs.command", Join("tools", "[2]") is "tools[2]", and an empty side is
// left out.
func Join(parent, child string) string {
	switch {
	case parent == "":
		return child
	case child == "":
		return parent
	case strings.HasPrefix(child, "["):
		return parent + child
	}
	return parent + "." + child
}

// Under puts parent in front of err's key. An error that is not an *Error
// becomes one keyed parent, with its text as the message.
func Under(parent string, err error) error {
	if err == nil {
		return nil
	}
	var fe *Error
	if errors.As(err, &fe) {
		return &Error{Key: Join(parent, fe.Key), Msg: fe.Msg}
	}
	return &Error{Key: parent, Msg: err.Error()}
}

// IsNull reports whether raw is absent, empty or JSON null: all three mean
// "not set" in a config.
func IsNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}

// Object is one config object's keys and raw values.
type Object map[string]json.RawMessage

// ParseObject decodes raw as an object; ok is false when it is not one
// (null included).
func ParseObject(raw json.RawMessage) (obj Object, ok bool) {
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, false
	}
	return obj, true
}

// Keys are the object's keys in byte order, so errors and warnings come out
// in the same order every time.
func (o Object) Keys() []string {
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Unknown lists the keys not in known, in byte order.
func (o Object) Unknown(known []string) []string {
	var out []string
	for _, k := range o.Keys() {
		if !slices.Contains(known, k) {
			out = append(out, k)
		}
	}
	return out
}

// Get returns the value of key when it is set (present and not null).
func (o Object) Get(key string) (json.RawMessage, bool) {
	raw, ok := o[key]
	if !ok || IsNull(raw) {
		return nil, false
	}
	return raw, true
}

// Decode unmarshals the value of key into v when it is set, reporting
// whether it was. A value of the wrong shape is an *Error for Join(at, key)
// with msg, which should say what the value must be.
func (o Object) Decode(at, key string, v any, msg string) (bool, error) {
	raw, ok := o.Get(key)
	if !ok {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return true, &Error{Key: Join(at, key), Msg: msg}
	}
	return true, nil
}

// Bool reads an optional boolean; nil when not set. wrongType is the
// message for a value that is not a boolean.
func (o Object) Bool(at, key, wrongType string) (*bool, error) {
	var b bool
	set, err := o.Decode(at, key, &b, wrongType)
	if !set || err != nil {
		return nil, err
	}
	return &b, nil
}

// String reads a string. A required one that is not set, or blank, is an
// error.
func (o Object) String(at, key string, required bool) (string, error) {
	var s string
	set, err := o.Decode(at, key, &s, "must be a string")
	switch {
	case err != nil:
		return "", err
	case required && !set:
		return "", &Error{Key: Join(at, key), Msg: "is required"}
	case required && strings.TrimSpace(s) == "":
		return "", &Error{Key: Join(at, key), Msg: "must not be empty"}
	}
	return s, nil
}

// Millis reads a positive whole number of milliseconds (at most 2^31), or
// def when not set. wrongValue is the message for anything else.
func (o Object) Millis(at, key string, def int, wrongValue string) (int, error) {
	raw, ok := o.Get(key)
	if !ok {
		return def, nil
	}
	ms, ok := PositiveMillis(raw)
	if !ok {
		return 0, &Error{Key: Join(at, key), Msg: wrongValue}
	}
	return ms, nil
}

// PositiveMillis reads raw as a positive whole number of milliseconds (at
// most 2^31).
func PositiveMillis(raw json.RawMessage) (int, bool) {
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil || f <= 0 || f > float64(1<<31) || f != float64(int(f)) {
		return 0, false
	}
	return int(f), true
}
