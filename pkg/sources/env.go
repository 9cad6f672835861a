package sources

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// secretRef matches ${NAME} (an environment variable) and ${file:/path} (a
// file's content, as Kubernetes mounts secrets).
var secretRef = regexp.MustCompile(`\$\{(?:([A-Za-z_][A-Za-z0-9_]*)|file:([^}]*))\}`)

// ExpandEnv replaces each ${NAME} in s with the environment variable NAME
// and each ${file:/path} with the content of that file, trailing newlines
// trimmed. An unset variable or an unreadable file is an error that names
// the reference, never a value, so a missing secret is obvious and a present
// one never leaks.
func ExpandEnv(s string) (string, error) {
	return expandEnvWith(s, os.LookupEnv)
}

// expandEnvWith is ExpandEnv with the variable lookup as a parameter.
func expandEnvWith(s string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var firstErr error
	out := secretRef.ReplaceAllStringFunc(s, func(m string) string {
		v, err := resolveRef(m, lookup)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return v
	})
	if firstErr != nil {
		return "", firstErr
	}
	return out, nil
}

// resolveRef is the value of one ${...} reference.
func resolveRef(m string, lookup func(string) (string, bool)) (string, error) {
	sub := secretRef.FindStringSubmatch(m)
	if sub[1] != "" {
		v, ok := lookup(sub[1])
		if !ok {
			return "", fmt.Errorf("environment variable %s is not set (referenced as %s)", sub[1], m)
		}
		return v, nil
	}
	p := sub[2]
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%s: the secret file must be an absolute path, e.g. ${file:/run/secrets/token}", m)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return "", fmt.Errorf("cannot read the secret file %s (referenced as %s): %v", p, m, pathless(err))
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}

// pathless drops the path an *os.PathError repeats, leaving the reason.
func pathless(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// HasSecretRef reports whether s holds a ${NAME} or ${file:/path} reference.
func HasSecretRef(s string) bool { return secretRef.MatchString(s) }

// ExpandHeaders expands ${ENV} and ${file:/path} in every header value.
// Errors name the header and the reference, never a value.
func ExpandHeaders(h map[string]string) (map[string]string, error) {
	return ExpandMap("header", h)
}

// ExpandMap expands every value of m; an error names what (e.g. "header")
// and the key.
func ExpandMap(what string, m map[string]string) (map[string]string, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		x, err := ExpandEnv(v)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", what, k, err)
		}
		out[k] = x
	}
	return out, nil
}
