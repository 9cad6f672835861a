package skill

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// The reasons a SKILL.md is skipped, as Inventory and ListSkills report them.
const (
	ReasonMissingName          = "missing-name"
	ReasonMalformedFrontmatter = "malformed-frontmatter"
	ReasonDuplicateName        = "duplicate-name"
	ReasonUnreadable           = "unreadable"
)

// document is a parsed SKILL.md.
type document struct {
	name        string
	description string
	body        string
}

// parseError is a SKILL.md that cannot be a skill, with its skip reason.
type parseError struct {
	reason string
	detail string
}

func (e *parseError) Error() string { return e.reason + ": " + e.detail }

var utf8BOM = []byte("\xef\xbb\xbf")

// parseDocument splits a SKILL.md into its `---`-fenced YAML frontmatter and
// the body after the closing fence, and reads name and description from
// the frontmatter. Every scalar is taken as a string and trimmed, so
// `name: 2024` is the skill "2024" rather than a type error.
func parseDocument(data []byte) (document, error) {
	data = bytes.TrimPrefix(data, utf8BOM)
	first, rest, _ := cutLine(data)
	if !isFence(first) {
		return document{}, &parseError{ReasonMissingName, "no frontmatter: the file must start with a --- line, then name: and description:, then ---"}
	}
	var front, body []byte
	found := false
	for off := 0; off < len(rest); {
		line, _, hasNL := cutLine(rest[off:])
		if isFence(line) {
			front, body, found = rest[:off], rest[off+len(line):], true
			if hasNL {
				body = body[1:]
			}
			break
		}
		off += len(line)
		if hasNL {
			off++
		}
	}
	if !found {
		return document{}, &parseError{ReasonMalformedFrontmatter, "the frontmatter has no closing --- line"}
	}

	var root yaml.Node
	if err := yaml.Unmarshal(front, &root); err != nil {
		return document{}, &parseError{ReasonMalformedFrontmatter, "invalid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	fields := map[string]string{}
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		m := resolve(root.Content[0])
		if m.Kind != yaml.MappingNode {
			if !(m.Kind == yaml.ScalarNode && m.Tag == "!!null") {
				return document{}, &parseError{ReasonMalformedFrontmatter, "the frontmatter must be a YAML mapping of keys to values (name: ..., description: ...)"}
			}
		}
		for i := 0; i+1 < len(m.Content); i += 2 {
			k, v := resolve(m.Content[i]), resolve(m.Content[i+1])
			key := k.Value
			if key != "name" && key != "description" {
				continue
			}
			if _, twice := fields[key]; twice {
				// The YAML node tree keeps both; silently picking one would
				// hide the author's mistake.
				return document{}, &parseError{ReasonMalformedFrontmatter, key + ": appears twice; keep one"}
			}
			s, err := scalarString(v)
			if err != nil {
				return document{}, &parseError{ReasonMalformedFrontmatter, fmt.Sprintf("%s: %v", key, err)}
			}
			fields[key] = s
		}
	}
	doc := document{name: fields["name"], description: fields["description"], body: string(body)}
	if doc.name == "" {
		return document{}, &parseError{ReasonMissingName, "the frontmatter has no name: give the skill a name: line"}
	}
	return doc, nil
}

// resolve follows YAML aliases (*anchor) to the node they stand for.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

var errNotScalar = errors.New("must be a single value (a string), not a list or a mapping")

func scalarString(n *yaml.Node) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", errNotScalar
	}
	if n.Tag == "!!null" {
		return "", nil
	}
	return strings.TrimSpace(n.Value), nil
}

// cutLine returns the first line of b without its newline, the remainder,
// and whether a newline ended the line. A CRLF line keeps its \r; isFence
// ignores it.
func cutLine(b []byte) (line, rest []byte, hasNL bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return b, nil, false
	}
	return b[:i], b[i+1:], true
}

func isFence(line []byte) bool {
	return string(bytes.TrimRight(line, " \t\r")) == "---"
}
