package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

// Override is one entry of the `overrides` config section: what the
// operator changes about the tool a source publishes under one registry
// name.
type Override struct {
	// Name renames the tool ("" keeps it): the old name becomes unknown.
	Name string
	// Description replaces the description (nil keeps it).
	Description *string
	// Arguments fixes argument values: each is removed from the input
	// schema, added to every call, and refused when a caller gives it.
	Arguments map[string]json.RawMessage
}

// overrides are the compiled `overrides` section, by registry name.
type overrides map[string]*compiled

type compiled struct {
	Override
	// fixed are the fixed argument names, sorted; members is them with
	// their values as JSON object members ("a":1,"b":"x"), ready to splice
	// into each call's arguments.
	fixed   []string
	members []byte
}

func compileOverrides(in map[string]Override) overrides {
	if len(in) == 0 {
		return nil
	}
	out := make(overrides, len(in))
	for name, o := range in {
		c := &compiled{Override: o}
		for k := range o.Arguments {
			c.fixed = append(c.fixed, k)
		}
		slices.Sort(c.fixed)
		var b bytes.Buffer
		for i, k := range c.fixed {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(&b, k)
			b.WriteByte(':')
			if err := json.Compact(&b, o.Arguments[k]); err != nil {
				b.Write(o.Arguments[k]) // the config checked it is JSON
			}
		}
		c.members = b.Bytes()
		out[name] = c
	}
	return out
}

// apply returns tools with the overrides applied; the same slice when none
// names one of them.
func (ov overrides) apply(tools []tool.Tool, log *slog.Logger) []tool.Tool {
	if len(ov) == 0 {
		return tools
	}
	var out []tool.Tool
	for i := range tools {
		o := ov[tools[i].Name]
		if o == nil {
			continue
		}
		if out == nil {
			out = slices.Clone(tools)
		}
		out[i] = o.on(tools[i], log)
	}
	if out == nil {
		return tools
	}
	keepNamesUnique(out, tools, log)
	return out
}

// keepNamesUnique undoes a rename that takes the name of another tool of
// the same source: the registry would refuse the whole layer.
func keepNamesUnique(out, orig []tool.Tool, log *slog.Logger) {
	count := make(map[string]int, len(out))
	for i := range out {
		count[out[i].Name]++
	}
	for i := range out {
		if count[out[i].Name] > 1 && out[i].Name != orig[i].Name {
			log.Error("overrides: a rename takes the name of another tool of the same source; the tool keeps its own name",
				"tool", orig[i].Name, "name", out[i].Name)
			count[out[i].Name]--
			out[i].Name = orig[i].Name
			count[out[i].Name]++
		}
	}
}

// on is t with o applied.
func (o *compiled) on(t tool.Tool, log *slog.Logger) tool.Tool {
	orig := t.Name
	if o.Name != "" {
		t.Name = o.Name
	}
	if o.Description != nil {
		t.Description = *o.Description
	}
	if len(o.fixed) == 0 {
		return t
	}
	schema, missing, err := withoutProperties(t.InputSchema, o.fixed)
	if err != nil {
		log.Error("overrides: the tool's input schema cannot be edited; its fixed arguments are still added and refused from callers",
			"tool", orig, "error", err)
	} else {
		t.InputSchema = schema
	}
	if len(missing) > 0 {
		log.Warn("overrides: fixed arguments the tool's input schema does not declare", "tool", orig, "arguments", strings.Join(missing, ", "))
	}
	run, name := t.Run, t.Name
	t.Run = func(ctx context.Context, call tool.Call) tool.Result {
		args, bad, ok := o.inject(call.Arguments)
		switch {
		case !ok:
			return tool.FailureWith(tool.OutcomeInvalidArguments, fmt.Sprintf("invalid arguments for %s: the arguments must be a JSON object, e.g. {}", name))
		case bad != "":
			return tool.FailureWith(tool.OutcomeInvalidArguments, fmt.Sprintf(
				"invalid arguments for %s (fix these and call again):\n- %s: is set by the server and may not be given; call again without it", name, bad))
		}
		call.Arguments = args
		return run(ctx, call)
	}
	return t
}

// inject adds the fixed arguments to a call's arguments object, or names
// an argument the caller may not give: a fixed one, in any letter case (Go
// decoders match keys case-insensitively, so "City" would reach a Go tool
// as its "city"). ok is false for arguments that are not a JSON object.
func (o *compiled) inject(args json.RawMessage) (_ json.RawMessage, bad string, ok bool) {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 {
		trimmed = []byte("{}")
	}
	var m map[string]json.RawMessage
	if len(trimmed) < 2 || trimmed[0] != '{' || json.Unmarshal(trimmed, &m) != nil {
		return nil, "", false
	}
	for k := range m {
		for _, f := range o.fixed {
			if strings.EqualFold(k, f) {
				return nil, k, true
			}
		}
	}
	out := make([]byte, 0, len(trimmed)+len(o.members)+1)
	out = append(out, trimmed[:len(trimmed)-1]...)
	if len(m) > 0 {
		out = append(out, ',')
	}
	out = append(out, o.members...)
	return append(out, '}'), "", true
}

// withoutProperties is schema without the named properties (in
// "properties" and "required"), and the names it did not declare.
func withoutProperties(schema json.RawMessage, names []string) (json.RawMessage, []string, error) {
	if len(schema) == 0 {
		schema = tool.DefaultInputSchema()
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(schema, &top); err != nil {
		return nil, nil, err
	}
	var props map[string]json.RawMessage
	if raw, ok := top["properties"]; ok {
		if err := json.Unmarshal(raw, &props); err != nil {
			return nil, nil, fmt.Errorf("properties: %w", err)
		}
	}
	var missing []string
	for _, n := range names {
		if _, ok := props[n]; !ok {
			missing = append(missing, n)
		}
		delete(props, n)
	}
	if props != nil {
		b, err := json.Marshal(props)
		if err != nil {
			return nil, nil, err
		}
		top["properties"] = b
	}
	if raw, ok := top["required"]; ok {
		var req []string
		if err := json.Unmarshal(raw, &req); err != nil {
			return nil, nil, fmt.Errorf("required: %w", err)
		}
		req = slices.DeleteFunc(req, func(r string) bool { return slices.Contains(names, r) })
		if len(req) == 0 {
			delete(top, "required") // draft-04 refuses an empty list
		} else {
			b, _ := json.Marshal(req) // strings always encode
			top["required"] = b
		}
	}
	out, err := json.Marshal(top)
	return out, missing, err
}
