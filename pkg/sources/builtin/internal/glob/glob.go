// Package glob matches workspace-relative paths against the glob patterns
// the grep and glob tools take: **, *, ?, [...] and {a,b}.
package glob

import (
	"errors"
	"path"
	"strings"
)

// maxAlternatives bounds brace expansion, so {a,b}{c,d}... cannot
// multiply into millions of patterns.
const maxAlternatives = 256

// Pattern is a compiled glob: ** matches any number of path segments
// (zero included), * and ? match within one segment, [...] is a character
// class, {a,b} gives alternatives. A pattern without "/" matches the base
// name, so *.md finds sub/c.md.
type Pattern struct {
	alts     [][]string // each alternative split into segments
	baseName bool
}

// ErrBad is a pattern that cannot be compiled.
var ErrBad = errors.New("invalid glob pattern")

// Compile compiles p; a leading "./" is ignored.
func Compile(p string) (*Pattern, error) {
	p = strings.TrimPrefix(p, "./")
	if p == "" {
		return nil, ErrBad
	}
	expanded, err := expandBraces(p)
	if err != nil {
		return nil, err
	}
	g := &Pattern{baseName: !strings.Contains(p, "/")}
	for _, alt := range expanded {
		segs := strings.Split(alt, "/")
		for _, s := range segs {
			if s == "**" {
				continue
			}
			// path.Match validates the whole segment pattern.
			if _, err := path.Match(s, ""); err != nil {
				return nil, ErrBad
			}
		}
		g.alts = append(g.alts, segs)
	}
	return g, nil
}

// match reports whether the slash-separated relative path rel matches.
// Match reports whether the slash-separated relative path rel matches.
func (g *Pattern) Match(rel string) bool {
	if g.baseName {
		rel = path.Base(rel)
	}
	segs := strings.Split(rel, "/")
	for _, alt := range g.alts {
		if matchSegments(alt, segs) {
			return true
		}
	}
	return false
}

func matchSegments(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for len(pat) > 0 && pat[0] == "**" {
				pat = pat[1:]
			}
			if len(pat) == 0 {
				return true
			}
			for i := 0; i < len(segs); i++ {
				if matchSegments(pat, segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], segs[0]); !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}

// expandBraces turns a{b,c}d into abd and acd, nested groups included.
func expandBraces(p string) ([]string, error) {
	open := -1
	depth := 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			if depth == 0 {
				open = i
			}
			depth++
		case '}':
			if depth == 0 {
				continue
			}
			depth--
			if depth > 0 {
				continue
			}
			var parts []string
			start, d := open+1, 0
			for j := open + 1; j < i; j++ {
				switch p[j] {
				case '\\':
					j++
				case '{':
					d++
				case '}':
					d--
				case ',':
					if d == 0 {
						parts = append(parts, p[start:j])
						start = j + 1
					}
				}
			}
			parts = append(parts, p[start:i])
			rest, err := expandBraces(p[i+1:])
			if err != nil {
				return nil, err
			}
			var out []string
			for _, part := range parts {
				inner, err := expandBraces(p[:open] + part)
				if err != nil {
					return nil, err
				}
				for _, a := range inner {
					for _, b := range rest {
						out = append(out, a+b)
						if len(out) > maxAlternatives {
							return nil, ErrBad
						}
					}
				}
			}
			return out, nil
		}
	}
	return []string{p}, nil
}
