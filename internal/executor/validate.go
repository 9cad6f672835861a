package executor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// schemaChecker validates arguments against one tool's input schema. It is
// compiled once, on the tool's first call, and kept while the tool lives.
type schemaChecker struct {
	schema *jsonschema.Schema
	// broken is set when the tool's own schema does not compile: the calls
	// then go through unvalidated (the tool is still usable), and the
	// problem is logged once.
	broken bool
}

func (s *toolState) check(args json.RawMessage) string {
	s.schemaOnce.Do(func() { s.schema = compileSchema(s.entry.Tool.Name, s.entry.Tool.InputSchema) })
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return fmt.Sprintf("invalid arguments for %s: the arguments must be a JSON object, e.g. {}", s.entry.Tool.Name)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(trimmed))
	if err != nil {
		return fmt.Sprintf("invalid arguments for %s: not valid JSON: %v", s.entry.Tool.Name, err)
	}
	if s.schema.broken || s.schema.schema == nil {
		return ""
	}
	err = s.schema.schema.Validate(inst)
	if err == nil {
		return ""
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return fmt.Sprintf("invalid arguments for %s: %v", s.entry.Tool.Name, err)
	}
	return describe(s.entry.Tool.Name, ve)
}

func compileSchema(name string, schema json.RawMessage) schemaChecker {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return schemaChecker{broken: true}
	}
	c := jsonschema.NewCompiler()
	url := "toolnexus:///" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return schemaChecker{broken: true}
	}
	sch, err := c.Compile(url)
	if err != nil {
		return schemaChecker{broken: true}
	}
	return schemaChecker{schema: sch}
}

// describe flattens a validation error into one line per failing field,
// naming the field by its JSON pointer and saying what was expected, so
// the model can correct the call.
func describe(name string, ve *jsonschema.ValidationError) string {
	var lines []string
	seen := map[string]bool{}
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			field := "/" + strings.Join(e.InstanceLocation, "/")
			if field == "/" {
				field = "(arguments)"
			}
			line := fmt.Sprintf("- %s: %s", field, e.ErrorKind.LocalizedString(nil))
			if !seen[line] {
				seen[line] = true
				lines = append(lines, line)
			}
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.Strings(lines)
	return fmt.Sprintf("invalid arguments for %s:\n%s", name, strings.Join(lines, "\n"))
}
