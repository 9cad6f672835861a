package strictjson

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
)

// exactKeys checks that every object key of raw that encoding/json gave to
// a struct field of t is spelt exactly as the field's name. encoding/json
// matches keys case-insensitively, so without this {"Command": "rm -rf x"}
// would fill a field named "command" while a policy reading
// context.arguments.command saw nothing: the tool and everything that
// judged the call must read the same members. raw has already decoded into
// t without error.
func exactKeys(raw []byte, t reflect.Type) error {
	return checkKeys(raw, t, "")
}

func checkKeys(raw []byte, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if decodesItself(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return nil // null, or a shape the decode already accepted
		}
		fields := fieldsOf(t)
		for k, v := range obj {
			ft, ok := fields[k]
			if !ok {
				return &Error{Kind: UnknownField, Field: join(path, k)}
			}
			if err := checkKeys(v, ft, join(path, k)); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		if !hasStruct(t.Elem()) {
			return nil
		}
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return nil
		}
		for _, it := range items {
			if err := checkKeys(it, t.Elem(), path); err != nil {
				return err
			}
		}
	case reflect.Map:
		if !hasStruct(t.Elem()) {
			return nil
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return nil
		}
		for k, v := range obj {
			if err := checkKeys(v, t.Elem(), join(path, k)); err != nil {
				return err
			}
		}
	}
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// decodesItself reports whether t (or *t) has its own decoding, which
// encoding/json hands the raw value to whole.
func decodesItself(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.Implements(jsonUnmarshaler) || pt.Implements(jsonUnmarshaler) ||
		t.Implements(textUnmarshaler) || pt.Implements(textUnmarshaler)
}

// hasStruct reports whether values of t can hold a struct whose keys
// matter (directly, through pointers, or as items of slices and maps).
func hasStruct(t reflect.Type) bool {
	for {
		switch t.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
			t = t.Elem()
		case reflect.Struct:
			return !decodesItself(t)
		default:
			return false
		}
	}
}

// fieldCache maps a struct type to its JSON member names and their types;
// arguments structs are few and fixed, so it only grows to their number.
var fieldCache sync.Map // reflect.Type → map[string]reflect.Type

// fieldsOf is t's JSON member names as encoding/json names them: the json
// tag's name or the Go name, embedded structs' members promoted, "-" and
// unexported fields left out.
func fieldsOf(t reflect.Type) map[string]reflect.Type {
	if v, ok := fieldCache.Load(t); ok {
		return v.(map[string]reflect.Type)
	}
	m := map[string]reflect.Type{}
	addFields(m, t)
	fieldCache.Store(t, m)
	return m
}

func addFields(m map[string]reflect.Type, t reflect.Type) {
	var embedded []reflect.Type
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if et := f.Type; f.Anonymous && name == "" {
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				embedded = append(embedded, et)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		m[name] = f.Type
	}
	// Promoted members after the struct's own: the outer field wins.
	for _, et := range embedded {
		inner := map[string]reflect.Type{}
		addFields(inner, et)
		for k, v := range inner {
			if _, taken := m[k]; !taken {
				m[k] = v
			}
		}
	}
}
