package htmltext_test

import (
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/pkg/sources/builtin/internal/htmltext"
)

func TestText(t *testing.T) {
	t.Parallel()
	got := htmltext.Text(`<html><head><title>T</title><script>var x = 1;</script><style>p{}</style></head>
<body><h1>Title</h1><p>one <b>two</b></p><p>three</p></body></html>`)
	for _, want := range []string{"Title", "one two", "three"} {
		if !strings.Contains(got, want) {
			t.Errorf("text lacks %q:\n%s", want, got)
		}
	}
	for _, never := range []string{"var x", "p{}", "<"} {
		if strings.Contains(got, never) {
			t.Errorf("text keeps %q:\n%s", never, got)
		}
	}
}
