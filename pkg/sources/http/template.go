package http

import (
	"fmt"
	"net/url"
	"strings"
)

// template is a URL with {placeholder}s, split once when the tool is built
// so a call only concatenates.
type template struct {
	parts []part
	names []string // placeholder names in order of first appearance
}

type part struct {
	lit  string
	name string // set for a placeholder; lit is then empty
}

// parseTemplate splits raw at its {placeholders} and checks that the result
// is an absolute http(s) URL.
func parseTemplate(raw string) (template, error) {
	var t template
	seen := map[string]bool{}
	rest := raw
	for rest != "" {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			if strings.IndexByte(rest, '}') >= 0 {
				return t, fmt.Errorf("unmatched } in %q; placeholders look like {id}", raw)
			}
			t.parts = append(t.parts, part{lit: rest})
			break
		}
		if strings.IndexByte(rest[:open], '}') >= 0 {
			return t, fmt.Errorf("unmatched } in %q; placeholders look like {id}", raw)
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return t, fmt.Errorf("unclosed { in %q; placeholders look like {id}", raw)
		}
		name := rest[open+1 : open+end]
		if name == "" || strings.ContainsAny(name, "{/?#&= ") {
			return t, fmt.Errorf("bad placeholder {%s} in %q; placeholders look like {id}", name, raw)
		}
		if open > 0 {
			t.parts = append(t.parts, part{lit: rest[:open]})
		}
		t.parts = append(t.parts, part{name: name})
		if !seen[name] {
			seen[name] = true
			t.names = append(t.names, name)
		}
		rest = rest[open+end+1:]
	}
	probe := t.fill(func(string) string { return "x" })
	u, err := url.Parse(probe)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return t, fmt.Errorf("must be an absolute http or https URL, e.g. \"https://api.example.test/posts/{id}\" (got %q)", raw)
	}
	return t, nil
}

// fill builds the URL, taking each placeholder's (already escaped) value
// from value.
func (t template) fill(value func(name string) string) string {
	var b strings.Builder
	for _, p := range t.parts {
		if p.name == "" {
			b.WriteString(p.lit)
		} else {
			b.WriteString(value(p.name))
		}
	}
	return b.String()
}
