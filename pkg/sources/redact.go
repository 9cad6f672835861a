package sources

import (
	"os"
	"sort"
	"strings"
)

// minSecret is the shortest value worth redacting: cutting every "1" out of
// a message would hide more than it protects.
const minSecret = 4

// Redacted replaces a secret value in any text a source hands on.
const Redacted = "[redacted]"

// Redactor removes the values that ${NAME} and ${file:/path} references
// expand to from any text that may reach a log, a status, an error or a
// model. An upstream can echo a header back in an error body or a result;
// the secret must still not travel further. The zero Redactor does nothing.
type Redactor struct {
	secrets []string
}

// NewRedactor resolves the references in the given config values (header
// values, environment entries, as written in the config) and keeps their
// values. References that do not resolve are skipped: they fail elsewhere.
func NewRedactor(templates ...string) Redactor {
	var r Redactor
	for _, t := range templates {
		for _, m := range secretRef.FindAllString(t, -1) {
			if v, err := resolveRef(m, os.LookupEnv); err == nil {
				r.add(v)
			}
		}
	}
	// Longest first, so a secret that contains another is cut whole.
	sort.Slice(r.secrets, func(i, j int) bool { return len(r.secrets[i]) > len(r.secrets[j]) })
	return r
}

// RedactorFor is NewRedactor over the values of maps such as headers.
func RedactorFor(maps ...map[string]string) Redactor {
	var templates []string
	for _, m := range maps {
		for _, v := range m {
			templates = append(templates, v)
		}
	}
	return NewRedactor(templates...)
}

func (r *Redactor) add(v string) {
	if len(v) < minSecret {
		return
	}
	for _, s := range r.secrets {
		if s == v {
			return
		}
	}
	r.secrets = append(r.secrets, v)
}

// Empty reports whether there is nothing to redact.
func (r Redactor) Empty() bool { return len(r.secrets) == 0 }

// Apply returns s with every secret replaced by [redacted].
func (r Redactor) Apply(s string) string {
	for _, secret := range r.secrets {
		if strings.Contains(s, secret) {
			s = strings.ReplaceAll(s, secret, Redacted)
		}
	}
	return s
}

// ApplyCut is Apply for a text cut at an arbitrary point (an output cap): a
// secret the cut split leaves only its start at the end, and that start is
// redacted too.
func (r Redactor) ApplyCut(s string) string {
	s = r.Apply(s)
	for _, secret := range r.secrets {
		for k := len(secret) - 1; k >= minSecret; k-- {
			if strings.HasSuffix(s, secret[:k]) {
				return s[:len(s)-k] + Redacted
			}
		}
	}
	return s
}
