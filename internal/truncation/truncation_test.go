package truncation_test

import (
	"testing"

	"github.com/toolnexus/toolnexus/internal/truncation"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

func TestSplit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, body string
		n        int64
	}{
		{"abc" + tool.TruncationNote(42), "abc", 42},
		{"abc" + truncation.Note(42), "abc", 42},
		{"abc\n[output truncated: 7 bytes omitted; limits.maxOutputBytes is 3]", "abc", 7},
		{"abc", "abc", 0},
		{"abc\n[output truncated: x bytes omitted]", "abc\n[output truncated: x bytes omitted]", 0},
		{"abc\n[output truncated: 5 bytes omitted] and more", "abc\n[output truncated: 5 bytes omitted] and more", 0},
	} {
		body, n := truncation.Split(tc.in)
		if body != tc.body || n != tc.n {
			t.Errorf("Split(%q) = %q, %d; want %q, %d", tc.in, body, n, tc.body, tc.n)
		}
	}
}
