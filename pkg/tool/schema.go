package tool

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
)

// SchemaFor derives a JSON Schema from the struct type T: one property per
// exported field named by its json tag (the field name when untagged, json:"-"
// skipped); required = fields without omitempty; Go kinds map to JSON types
// (string, boolean, integer, number, array with items, object, nested
// objects); a `jsonschema:"description=..."` or `description:"..."` tag
// becomes the property's description. The root forbids additional properties.
// Embedded structs are flattened by encoding/json's rules, and a type that
// decodes itself is described by what it accepts (time.Time: a date-time
// string; a json.Unmarshaler: any value; a TextUnmarshaler: a string).
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
	if seen[typ] {
		// A recursive type: stop at an open object rather than loop forever.
		return map[string]any{"type": "object"}
	}
	seen[typ] = true
	defer delete(seen, typ)
	props := map[string]any{}
	required := []string{}
	for _, f := range jsonFields(typ) {
		prop := typeSchema(f.typ, seen)
		if f.quoted {
			prop = map[string]any{"type": "string"}
		}
		if d := fieldDescription(f.tag); d != "" {
			prop["description"] = d
		}
		props[f.name] = prop
		if !f.optional {
			required = append(required, f.name)
		}
	}
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// jsonField is one property of a struct as encoding/json sees it.
type jsonField struct {
	name     string
	index    []int // path through embedded structs; its length is the depth
	typ      reflect.Type
	tag      reflect.StructTag
	tagged   bool // named by a json tag
	optional bool // omitempty or omitzero
	quoted   bool // ",string": a number or bool carried inside a JSON string
}

// jsonFields lists the fields encoding/json decodes into, so that the schema
// promises exactly what decoding accepts: embedded structs are flattened
// breadth-first; of several fields with one name the shallowest wins, at equal
// depth a single tagged one wins, and otherwise the name is dropped (as
// encoding/json drops it). Each struct type is expanded once, so a struct that
// embeds itself through a pointer terminates. The result is in field order.
func jsonFields(root reflect.Type) []jsonField {
	type embedded struct {
		typ   reflect.Type
		index []int
	}
	var all []jsonField
	visited := map[reflect.Type]bool{}
	next := []embedded{{typ: root}}
	for len(next) > 0 {
		current := next
		next = nil
		// A type embedded twice at one depth contributes its fields twice,
		// so that they cancel out below, as in encoding/json.
		times := map[reflect.Type]int{}
		for _, e := range current {
			times[e.typ]++
		}
		for _, e := range current {
			if visited[e.typ] {
				continue
			}
			visited[e.typ] = true
			for i := 0; i < e.typ.NumField(); i++ {
				f := e.typ.Field(i)
				tag := f.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				index := append(e.index[:len(e.index):len(e.index)], i)
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
					next = append(next, embedded{typ: ft, index: index})
					continue
				}
				// encoding/json also fills an unexported embedded struct
				// that a tag names; any other unexported field is private.
				if !f.IsExported() && !(f.Anonymous && ft.Kind() == reflect.Struct) {
					continue
				}
				jf := jsonField{
					name: name, index: index, typ: f.Type, tag: f.Tag, tagged: name != "",
					optional: hasOpt(opts, "omitempty") || hasOpt(opts, "omitzero"),
				}
				if hasOpt(opts, "string") {
					switch ft.Kind() {
					case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
						reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
						reflect.Float32, reflect.Float64:
						jf.quoted = true
					}
				}
				if jf.name == "" {
					jf.name = f.Name
				}
				for range times[e.typ] {
					all = append(all, jf)
				}
			}
		}
	}

	// Group by name, the dominant field first: shallowest, then tagged.
	slices.SortStableFunc(all, func(a, b jsonField) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		if c := len(a.index) - len(b.index); c != 0 {
			return c
		}
		if a.tagged != b.tagged {
			if a.tagged {
				return -1
			}
			return 1
		}
		return 0
	})
	out := all[:0]
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].name == all[i].name {
			j++
		}
		first := all[i]
		if j == i+1 || len(all[i+1].index) > len(first.index) ||
			first.tagged && !all[i+1].tagged {
			out = append(out, first)
		}
		i = j
	}
	slices.SortFunc(out, func(a, b jsonField) int { return slices.Compare(a.index, b.index) })
	return out
}

// hasOpt reports whether a json tag's comma-separated options include opt.
func hasOpt(opts, opt string) bool {
	for o := range strings.SplitSeq(opts, ",") {
		if o == opt {
			return true
		}
	}
	return false
}

var (
	timeType            = reflect.TypeFor[time.Time]()
	numberType          = reflect.TypeFor[json.Number]()
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func typeSchema(t reflect.Type, seen map[reflect.Type]bool) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	// A type that decodes itself is described by what it accepts, not by
	// its Go layout: time.Time is a struct, yet its JSON is an RFC 3339
	// string. encoding/json prefers UnmarshalJSON, then UnmarshalText.
	switch pt := reflect.PointerTo(t); {
	case t == timeType:
		return map[string]any{"type": "string", "format": "date-time"}
	case t == numberType:
		return map[string]any{"type": "number"}
	case pt.Implements(jsonUnmarshalerType):
		return map[string]any{} // json.RawMessage and the like: any JSON value
	case pt.Implements(textUnmarshalerType):
		return map[string]any{"type": "string"}
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
