package tool

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// SchemaFor derives a JSON Schema from the struct type T: one property per
// exported field named by its json tag (the field name when untagged, json:"-"
// skipped); required = fields without omitempty; Go kinds map to JSON types
// (string, boolean, integer, number, array with items, object, nested
// objects); a `jsonschema:"description=..."` or `description:"..."` tag
// becomes the property's description. The root forbids additional properties.
func SchemaFor[T any]() (json.RawMessage, error) {
	typ := reflect.TypeFor[T]()
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if typ.Kind() != reflect.Struct {
		return nil, fmt.Errorf("Typed needs a struct type, got %s", typ)
	}
	s := structSchema(typ, map[reflect.Type]bool{})
	s["additionalProperties"] = false
	return json.Marshal(s)
}

func structSchema(typ reflect.Type, seen map[reflect.Type]bool) map[string]any {
	props := map[string]any{}
	required := []string{}
	if seen[typ] {
		// A recursive type: stop at an open object rather than loop forever.
		return map[string]any{"type": "object"}
	}
	seen[typ] = true
	defer delete(seen, typ)
	addFields(typ, props, &required, seen)
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func addFields(typ reflect.Type, props map[string]any, required *[]string, seen map[reflect.Type]bool) {
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				// Embedded structs are flattened, as encoding/json does.
				addFields(ft, props, required, seen)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		prop := typeSchema(f.Type, seen)
		if d := fieldDescription(f.Tag); d != "" {
			prop["description"] = d
		}
		props[name] = prop
		if !strings.Contains(","+opts+",", ",omitempty,") && !strings.Contains(","+opts+",", ",omitzero,") {
			*required = append(*required, name)
		}
	}
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

func typeSchema(t reflect.Type, seen map[reflect.Type]bool) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessageType {
		return map[string]any{}
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice, reflect.Array:
		return map[string]any{"type": "array", "items": typeSchema(t.Elem(), seen)}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": typeSchema(t.Elem(), seen)}
	case reflect.Struct:
		return structSchema(t, seen)
	}
	// interface{} and anything else: accept any JSON value.
	return map[string]any{}
}

// fieldDescription reads `jsonschema:"description=..."` (the description runs
// to the next ",key=" or the end) or a plain `description:"..."` tag.
func fieldDescription(tag reflect.StructTag) string {
	if js, ok := tag.Lookup("jsonschema"); ok {
		if _, rest, found := strings.Cut(js, "description="); found {
			parts := strings.Split(rest, ",")
			desc := parts[0]
			for _, p := range parts[1:] {
				if strings.Contains(p, "=") {
					break
				}
				desc += "," + p
			}
			return desc
		}
	}
	return tag.Get("description")
}
