package tool_test

import (
	"testing"

	"github.com/toolnexus/toolnexus/pkg/tool"
)

func TestSanitize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a b/c.d:e", "a_b_c_d_e"},
		{"keep-_OK1", "keep-_OK1"},
		{"héllo", "h_llo"},     // 2-byte é → one _
		{"日本", "__"},           // 3-byte characters → one _ each
		{"emoji😀x", "emoji_x"}, // 4-byte character → one _
		{"", ""},
		{"...", "___"},
		{"tab\there", "tab_here"},
		{"a\xffb", "a_b"}, // an invalid byte is one character
		{"ZZ09az-_", "ZZ09az-_"},
		{"server.tool@v2", "server_tool_v2"},
	}
	for _, tt := range tests {
		if got := tool.Sanitize(tt.in); got != tt.want {
			t.Errorf("Sanitize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// A clean name is the common case on every source refresh: it must come back
// without a copy.
func TestSanitizeCleanDoesNotAllocate(t *testing.T) {
	name := "already_clean-Name42"
	if n := testing.AllocsPerRun(100, func() { _ = tool.Sanitize(name) }); n != 0 {
		t.Errorf("Sanitize of a clean name allocates %v times, want 0", n)
	}
}

func FuzzSanitize(f *testing.F) {
	for _, s := range []string{"a b/c.d:e", "keep-_OK1", "héllo", "日本", "\xff", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := tool.Sanitize(s)
		for i := 0; i < len(got); i++ {
			c := got[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
				t.Fatalf("Sanitize(%q) = %q holds %q", s, got, c)
			}
		}
		if len(got) > len(s) {
			t.Fatalf("Sanitize(%q) = %q grew", s, got)
		}
		if again := tool.Sanitize(got); again != got {
			t.Fatalf("Sanitize is not idempotent: %q → %q → %q", s, got, again)
		}
	})
}
