package executor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// schemaChecker validates arguments against one tool's input schema. It is
// compiled once, on the tool's first call, and kept while the tool lives.
type schemaChecker struct {
	schema *jsonschema.Schema
	// props are the top-level property names the schema declares, sorted,
	// to tell the model what it may send instead of an unknown property.
	props []string
	// permissive is set for a schema that accepts any object (only "type":
	// "object" plus annotations): the caller has already checked for an
	// object, so the call skips decoding and validating entirely.
	permissive bool
	// broken is set when the tool's own schema does not compile: the calls
	// then go through unvalidated (the tool is still usable).
	broken bool
}

func (s *toolMeta) check(args json.RawMessage) string {
	s.schemaOnce.Do(func() {
		var err error
		s.schema, err = compileSchema(s.name, s.schemaSrc)
		if err != nil && s.log != nil {
			// Once per tool: the operator learns why its calls are not
			// checked; the tool itself stays usable.
			s.log.Warn("input schema does not compile; this tool's arguments go unvalidated",
				"tool", s.name, "source", s.source, "error", err)
		}
	})
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return fmt.Sprintf("invalid arguments for %s: the arguments must be a JSON object, e.g. {}", s.name)
	}
	if s.schema.broken || s.schema.schema == nil || s.schema.permissive {
		return "" // for permissive, the object check above is all the schema asks for
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(trimmed))
	if err != nil {
		return fmt.Sprintf("invalid arguments for %s: not valid JSON: %v", s.name, err)
	}
	err = s.schema.schema.Validate(inst)
	if err == nil {
		return ""
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return fmt.Sprintf("invalid arguments for %s: %v", s.name, err)
	}
	return describe(s.name, ve, s.schema.props)
}

// annotationKeys change nothing about which objects a schema accepts.
var annotationKeys = map[string]bool{"type": true, "$schema": true, "$id": true, "title": true,
	"description": true, "$comment": true, "examples": true, "default": true}

func compileSchema(name string, schema json.RawMessage) (schemaChecker, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return schemaChecker{broken: true}, err
	}
	if m, ok := doc.(map[string]any); ok && m["type"] == "object" {
		permissive := true
		for k := range m {
			if !annotationKeys[k] {
				permissive = false
				break
			}
		}
		if permissive {
			return schemaChecker{permissive: true}, nil
		}
	}
	c := jsonschema.NewCompiler()
	url := "toolnexus:///" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return schemaChecker{broken: true}, err
	}
	sch, err := c.Compile(url)
	if err != nil {
		return schemaChecker{broken: true}, err
	}
	var props []string
	if m, ok := doc.(map[string]any); ok {
		if p, ok := m["properties"].(map[string]any); ok {
			for k := range p {
				props = append(props, k)
			}
			sort.Strings(props)
		}
	}
	return schemaChecker{schema: sch, props: props}, nil
}

// english renders the error kinds this file has no wording of its own for.
// jsonschema's LocalizedString needs a non-nil printer (nil panics).
var english = message.NewPrinter(language.English)

// describe flattens a validation error into one line per failing field:
// the field as a path the model can read (user.tags[2]) and what was
// expected, e.g.
//
//	invalid arguments for debug_sleep (fix these and call again):
//	- ms: expected integer, got string
func describe(name string, ve *jsonschema.ValidationError, topProps []string) string {
	var lines []string
	seen := map[string]bool{}
	add := func(field, msg string) {
		line := "- " + field + ": " + msg
		if !seen[line] {
			seen[line] = true
			lines = append(lines, line)
		}
	}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		switch e.ErrorKind.(type) {
		case *kind.AnyOf, *kind.OneOf:
			// Alternatives: listing each branch's failures as separate
			// lines would read as if all of them had to be fixed.
			if len(e.Causes) > 0 {
				add(fieldPath(e.InstanceLocation), alternatives(e, topProps))
				return
			}
		}
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		at := e.InstanceLocation
		switch k := e.ErrorKind.(type) {
		case *kind.Required:
			for _, m := range k.Missing {
				add(fieldPath(append(at[:len(at):len(at)], m)), "missing; this field is required")
			}
		case *kind.AdditionalProperties:
			msg := "unknown property; remove it"
			if len(at) == 0 && len(topProps) > 0 {
				msg += " (this tool takes: " + strings.Join(topProps, ", ") + ")"
			}
			for _, p := range k.Properties {
				add(fieldPath(append(at[:len(at):len(at)], p)), msg)
			}
		default:
			add(fieldPath(at), kindMessage(e.ErrorKind))
		}
	}
	walk(ve)
	sort.Strings(lines)
	return fmt.Sprintf("invalid arguments for %s (fix these and call again):\n%s", name, strings.Join(lines, "\n"))
}

// alternatives describes a failed anyOf/oneOf: a plain type union as
// "expected string or integer, got boolean", anything else as the numbered
// failures of each allowed form.
func alternatives(e *jsonschema.ValidationError, topProps []string) string {
	var want []string
	got := ""
	union := true
	for _, c := range e.Causes {
		t, ok := c.ErrorKind.(*kind.Type)
		if !ok || len(c.Causes) > 0 || len(c.InstanceLocation) != len(e.InstanceLocation) {
			union = false
			break
		}
		got = t.Got
		for _, w := range t.Want {
			if !slices.Contains(want, w) {
				want = append(want, w)
			}
		}
	}
	if union {
		return fmt.Sprintf("expected %s, got %s", strings.Join(want, " or "), got)
	}
	here := fieldPath(e.InstanceLocation)
	forms := make([]string, len(e.Causes))
	for i, c := range e.Causes {
		// Each branch as its own little report, fields relative to here.
		lines := strings.Split(describe("", c, topProps), "\n")[1:]
		for j, l := range lines {
			l = strings.TrimPrefix(l, "- ")
			lines[j] = strings.TrimPrefix(l, here+": ")
		}
		forms[i] = fmt.Sprintf("(%d) %s", i+1, strings.Join(lines, "; "))
	}
	return "matches none of the allowed forms: " + strings.Join(forms, " ")
}

// kindMessage says what was expected, in words a model can act on.
func kindMessage(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Type:
		return fmt.Sprintf("expected %s, got %s", strings.Join(k.Want, " or "), k.Got)
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = jsonText(w)
		}
		return fmt.Sprintf("expected one of %s, got %s", strings.Join(want, ", "), jsonText(k.Got))
	case *kind.Const:
		return fmt.Sprintf("expected %s, got %s", jsonText(k.Want), jsonText(k.Got))
	case *kind.Minimum:
		return fmt.Sprintf("must be >= %s, got %s", ratText(k.Want), ratText(k.Got))
	case *kind.Maximum:
		return fmt.Sprintf("must be <= %s, got %s", ratText(k.Want), ratText(k.Got))
	case *kind.ExclusiveMinimum:
		return fmt.Sprintf("must be > %s, got %s", ratText(k.Want), ratText(k.Got))
	case *kind.ExclusiveMaximum:
		return fmt.Sprintf("must be < %s, got %s", ratText(k.Want), ratText(k.Got))
	case *kind.MultipleOf:
		return fmt.Sprintf("must be a multiple of %s, got %s", ratText(k.Want), ratText(k.Got))
	case *kind.MinLength:
		return fmt.Sprintf("must be at least %d characters long, got %d", k.Want, k.Got)
	case *kind.MaxLength:
		return fmt.Sprintf("must be at most %d characters long, got %d", k.Want, k.Got)
	case *kind.MinItems:
		return fmt.Sprintf("must have at least %d items, got %d", k.Want, k.Got)
	case *kind.MaxItems:
		return fmt.Sprintf("must have at most %d items, got %d", k.Want, k.Got)
	case *kind.MinProperties:
		return fmt.Sprintf("must have at least %d properties, got %d", k.Want, k.Got)
	case *kind.MaxProperties:
		return fmt.Sprintf("must have at most %d properties, got %d", k.Want, k.Got)
	case *kind.Pattern:
		return fmt.Sprintf("must match the regular expression %s", strconv.Quote(k.Want))
	case *kind.Format:
		return fmt.Sprintf("must be a valid %s", k.Want)
	case *kind.FalseSchema:
		return "not allowed here; remove it"
	case *kind.Not:
		return "this value is not allowed here (the schema's \"not\" rule excludes it)"
	case *kind.OneOf:
		return "matches more than one of the allowed forms; change it to match exactly one"
	}
	return k.LocalizedString(english)
}

// fieldPath renders an instance location as user.tags[2]; the arguments
// object itself is "(arguments)".
func fieldPath(loc []string) string {
	if len(loc) == 0 {
		return "(arguments)"
	}
	var b strings.Builder
	for i, seg := range loc {
		if _, err := strconv.Atoi(seg); err == nil && i > 0 {
			b.WriteString("[" + seg + "]")
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func ratText(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}
