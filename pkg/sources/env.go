package sources

import (
	"fmt"
	"os"
	"regexp"
)

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// ExpandEnv replaces each ${NAME} in s with the environment variable NAME.
// An unset variable is an error that names the variable, never the value,
// so a missing secret is obvious and a present one never leaks.
func ExpandEnv(s string) (string, error) {
	return ExpandEnvWith(s, os.LookupEnv)
}

// ExpandEnvWith is ExpandEnv with a custom lookup (for tests).
func ExpandEnvWith(s string, lookup func(string) (string, bool)) (string, error) {
	var missing string
	out := envRef.ReplaceAllStringFunc(s, func(m string) string {
		name := m[2 : len(m)-1]
		v, ok := lookup(name)
		if !ok && missing == "" {
			missing = name
		}
		return v
	})
	if missing != "" {
		return "", fmt.Errorf("environment variable %s is not set (referenced as ${%s})", missing, missing)
	}
	return out, nil
}

// ExpandHeaders expands ${ENV} in every header value. Errors name the header
// and the variable, never a value.
func ExpandHeaders(h map[string]string) (map[string]string, error) {
	if len(h) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(h))
	for k, v := range h {
		x, err := ExpandEnv(v)
		if err != nil {
			return nil, fmt.Errorf("header %s: %w", k, err)
		}
		out[k] = x
	}
	return out, nil
}
