package glob_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/sources/builtin/internal/glob"
)

func TestMatch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pattern, path string
		want          bool
	}{
		{"*.md", "a.md", true},
		{"*.md", "sub/c.md", true}, // no slash: the base name
		{"sub/*.md", "sub/c.md", true},
		{"sub/*.md", "sub/deep/c.md", false},
		{"**/*.go", "a/b/c.go", true},
		{"**/*.go", "c.go", true}, // ** matches zero segments
		{"./src/{a,b}.txt", "src/b.txt", true},
		{"src/{a,b}.txt", "src/c.txt", false},
		{"[ab]?.txt", "bx.txt", true},
	} {
		g, err := glob.Compile(tc.pattern)
		if err != nil {
			t.Fatalf("Compile(%q): %v", tc.pattern, err)
		}
		if got := g.Match(tc.path); got != tc.want {
			t.Errorf("%q matches %q = %v, want %v", tc.pattern, tc.path, got, tc.want)
		}
	}
}

// Brace expansion is bounded, so a hostile pattern cannot multiply into
// millions of alternatives.
func TestCompileRefuses(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"", "./", "[", strings.Repeat("{a,b}", 12)} {
		if _, err := glob.Compile(p); err == nil {
			t.Errorf("Compile(%q) accepted", p)
		} else if p == "" && !errors.Is(err, glob.ErrBad) {
			t.Errorf("Compile(%q) = %v, want ErrBad", p, err)
		}
	}
}
