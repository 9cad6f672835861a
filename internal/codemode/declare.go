package codemode

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Declare renders one tool as a TypeScript-like declaration generated from
// its input schema, the way a script calls it:
//
//	/** Send an email. */
//	tools.gmail_send_email(args: { to: string; subject?: string }): any
//
// The model reads it; nothing compiles it, so an exotic schema degrades to
// `any` instead of failing.
func Declare(name, description string, schema json.RawMessage) string {
	var s map[string]any
	_ = json.Unmarshal(schema, &s)
	var b strings.Builder
	if d := oneLine(description); d != "" {
		b.WriteString("/** " + d + " */\n")
	}
	fmt.Fprintf(&b, "tools.%s(args: %s): any", name, tsType(s, 0))
	return b.String()
}

var spaces = regexp.MustCompile(`\s+`)

func oneLine(s string) string {
	s = strings.ReplaceAll(spaces.ReplaceAllString(strings.TrimSpace(s), " "), "*/", "* /")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// tsType is the TypeScript type of a JSON Schema, three levels deep.
func tsType(s map[string]any, depth int) string {
	if s == nil || depth > 3 {
		return "any"
	}
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		parts := make([]string, 0, len(enum))
		for _, v := range enum {
			b, _ := json.Marshal(v)
			parts = append(parts, string(b))
		}
		return strings.Join(parts, " | ")
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[k].([]any); ok && len(alts) > 0 {
			parts := make([]string, 0, len(alts))
			for _, a := range alts {
				m, _ := a.(map[string]any)
				parts = append(parts, tsType(m, depth+1))
			}
			return strings.Join(parts, " | ")
		}
	}
	switch t := s["type"].(type) {
	case string:
		return tsScalar(t, s, depth)
	case []any:
		parts := make([]string, 0, len(t))
		for _, x := range t {
			if n, ok := x.(string); ok {
				parts = append(parts, tsScalar(n, s, depth))
			}
		}
		if len(parts) > 0 {
			return strings.Join(parts, " | ")
		}
	}
	if _, ok := s["properties"]; ok {
		return tsObject(s, depth)
	}
	return "any"
}

func tsScalar(t string, s map[string]any, depth int) string {
	switch t {
	case "string":
		return "string"
	case "integer", "number":
		return "number"
	case "boolean":
		return "boolean"
	case "null":
		return "null"
	case "array":
		items, _ := s["items"].(map[string]any)
		it := tsType(items, depth+1)
		if strings.Contains(it, "|") {
			it = "(" + it + ")"
		}
		return it + "[]"
	case "object":
		return tsObject(s, depth)
	}
	return "any"
}

func tsObject(s map[string]any, depth int) string {
	props, _ := s["properties"].(map[string]any)
	if len(props) == 0 {
		return "Record<string, any>"
	}
	required := map[string]bool{}
	if req, ok := s["required"].([]any); ok {
		for _, r := range req {
			if n, ok := r.(string); ok {
				required[n] = true
			}
		}
	}
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("{ ")
	for _, n := range names {
		p, _ := props[n].(map[string]any)
		if d, _ := p["description"].(string); d != "" && depth == 0 {
			b.WriteString("/** " + oneLine(d) + " */ ")
		}
		key := n
		if !identifier.MatchString(n) {
			q, _ := json.Marshal(n)
			key = string(q)
		}
		opt := "?"
		if required[n] {
			opt = ""
		}
		fmt.Fprintf(&b, "%s%s: %s; ", key, opt, tsType(p, depth+1))
	}
	b.WriteString("}")
	return b.String()
}

var identifier = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)
