package skill

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParseDocument feeds arbitrary SKILL.md bytes to the frontmatter
// parser: it must never panic, must classify every rejection with one of
// the skip reasons, and must hand back trimmed, non-empty names.
func FuzzParseDocument(f *testing.F) {
	for _, seed := range []string{
		"---\nname: a\ndescription: b\n---\nbody",
		"---\nname: >\n  folded\n---\n",
		"---\r\nname: crlf\r\n---\r\n",
		"\ufeff---\nname: 'q'\n---",
		"---\nname: [x\n---\n",
		"---\n- 1\n---\n",
		"---\nname: *a\n---\n",
		"no frontmatter",
		"---\n",
		"",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := parseDocument(data)
		if err != nil {
			var pe *parseError
			if !errors.As(err, &pe) {
				t.Fatalf("untyped error %v", err)
			}
			switch pe.reason {
			case ReasonMissingName, ReasonMalformedFrontmatter:
			default:
				t.Fatalf("unexpected reason %q", pe.reason)
			}
			if pe.detail == "" {
				t.Fatal("rejection without detail")
			}
			return
		}
		if doc.name == "" || doc.name != strings.TrimSpace(doc.name) {
			t.Fatalf("bad name %q", doc.name)
		}
		if doc.description != strings.TrimSpace(doc.description) {
			t.Fatalf("untrimmed description %q", doc.description)
		}
	})
}
