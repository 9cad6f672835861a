package mcp

import (
	"os"
	"regexp"
	"strings"
)

// envRef matches a ${NAME} reference, as sources.ExpandEnv expands them.
var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// minSecret is the shortest value worth redacting: cutting every "1" out of
// an error message would hide more than it protects.
const minSecret = 4

// redactor removes the values of the environment variables a server's
// headers reference from any text that may reach a log, a status or a
// model. A server can echo a header back in an error body; the secret must
// still not travel further.
type redactor []string

func newRedactor(headers map[string]string) redactor {
	var r redactor
	for _, raw := range headers {
		for _, m := range envRef.FindAllStringSubmatch(raw, -1) {
			if v := os.Getenv(m[1]); len(v) >= minSecret {
				r = append(r, v)
			}
		}
	}
	return r
}

func (r redactor) apply(s string) string {
	for _, secret := range r {
		if strings.Contains(s, secret) {
			s = strings.ReplaceAll(s, secret, "[redacted]")
		}
	}
	return s
}
