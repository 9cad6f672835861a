// Package childenv builds the environment of the processes toolnexus
// starts (the builtin bash tool's shells, stdio MCP servers). A child never
// inherits the server's environment: that is where the server's own
// secrets live (auth tokens, API keys for headers), and any tool allowed to
// run a command, or any third-party MCP server, could read them. A child
// gets a few harmless variables from the server, when they are set, plus
// exactly what the config gives that child.
package childenv

import (
	"os"
	"slices"
	"strings"
)

// Base are the variables a child inherits from the server, when set: what
// programs need to find commands, a home directory, a locale, a terminal
// type, a time zone and the user's name.
var Base = []string{"PATH", "HOME", "LANG", "LC_ALL", "TERM", "TZ", "USER", "LOGNAME"}

// Build is the environment for one child: Base as the server has it, then
// extra (already expanded; a later value of the same name wins), in
// "NAME=value" form, sorted by name.
func Build(extra map[string]string) []string {
	return BuildWith(os.LookupEnv, extra)
}

// BuildWith is Build with a custom lookup of the server's environment.
func BuildWith(lookup func(string) (string, bool), extra map[string]string) []string {
	m := make(map[string]string, len(Base)+len(extra))
	for _, name := range Base {
		if v, ok := lookup(name); ok {
			m[name] = v
		}
	}
	for k, v := range extra {
		m[k] = v
	}
	env := make([]string, 0, len(m))
	for k, v := range m {
		env = append(env, k+"="+v)
	}
	slices.SortFunc(env, func(a, b string) int {
		return strings.Compare(a[:strings.IndexByte(a, '=')], b[:strings.IndexByte(b, '=')])
	})
	return env
}

// ValidName reports whether s can name an environment variable: a letter or
// underscore, then letters, digits and underscores.
func ValidName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
