package docs_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/internal/config"
)

// sections are the config's top-level keys; a snippet whose keys are not
// all among them is a fragment of one section (auth.md's "oidc": {...}).
var sections = config.TopLevelKeys()

var (
	fileRefRE = regexp.MustCompile(`\$\{file:(/[^}]+)\}`)
	envRefRE  = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)
)

// Every JSON block (unless marked) is a config, or a fragment of one, that
// the real config loader accepts: keys, types and values as the server
// reads them, every ${VAR} and ${file:...} resolved (the test provides
// them), Cedar policy files it names stubbed.
func TestConfigSnippetsLoad(t *testing.T) {
	n := 0
	for _, b := range allBlocks(t) {
		if b.lang != "json" || b.marker != "" {
			continue
		}
		n++
		t.Run(b.String(), func(t *testing.T) {
			loadSnippet(t, b.text)
		})
	}
	if n < 15 {
		t.Fatalf("only %d config snippets found", n)
	}
}

// loadSnippet parses text as a config, wrapped in {} when it is a list of
// members, and under the section it belongs to when it is a fragment.
func loadSnippet(t *testing.T, text string) {
	t.Helper()
	dir := t.TempDir()
	text = provideRefs(t, dir, text)
	body := strings.TrimSpace(text)
	if strings.HasPrefix(body, `"`) {
		body = "{" + body + "}"
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &top); err != nil {
		t.Fatalf("not a JSON object (or a list of members): %v\n%s", err, text)
	}
	stubPolicyFiles(t, dir, top)
	candidates := [][]byte{[]byte(body)}
	if !allSections(top) {
		candidates = nil
		for _, s := range sections {
			candidates = append(candidates, []byte(`{"`+s+`": `+body+`}`))
		}
	}
	var firstErr error
	for _, c := range candidates {
		cfg, err := config.Parse(c, filepath.Join(dir, "toolnexus.json"), dir)
		if err == nil {
			if err = cfg.CheckRefs(); err == nil {
				return
			}
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	t.Fatalf("the config loader refuses this snippet: %v\n%s", firstErr, text)
}

func allSections(top map[string]json.RawMessage) bool {
	for k := range top {
		if !slices.Contains(sections, k) {
			return false
		}
	}
	return true
}

// provideRefs makes every ${file:/abs} resolve (a file under dir, the
// reference rewritten to it) and every ${VAR} set.
func provideRefs(t *testing.T, dir, text string) string {
	t.Helper()
	text = fileRefRE.ReplaceAllStringFunc(text, func(ref string) string {
		p := filepath.Join(dir, "refs", fileRefRE.FindStringSubmatch(ref)[1])
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("a-doc-test-secret-0123456789\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return "${file:" + p + "}"
	})
	for _, m := range envRefRE.FindAllStringSubmatch(text, -1) {
		if _, set := os.LookupEnv(m[1]); !set {
			t.Setenv(m[1], "a-doc-test-value-0123456789")
		}
	}
	return text
}

// stubPolicyFiles writes a permissive policy at each relative path
// policy.files names, so the loader can read the snippet's policy section.
func stubPolicyFiles(t *testing.T, dir string, top map[string]json.RawMessage) {
	t.Helper()
	var p struct {
		Files []string `json:"files"`
	}
	if raw, ok := top["policy"]; !ok || json.Unmarshal(raw, &p) != nil {
		return
	}
	for _, f := range p.Files {
		path := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(`@id("doc-test") permit(principal, action, resource);`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}
