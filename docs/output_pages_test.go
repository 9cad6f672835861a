package docs_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/internal/catalog"
	"github.com/toolnexus/toolnexus/internal/console"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

func init() {
	outputChecks["pin-canonical"] = checkPinCanonical
	outputChecks["console-csp"] = checkConsoleCSP
}

// docs/catalog.md's canonical text is what the catalog pins for the tool
// it describes (the page wraps the one line in two).
func checkPinCanonical(t *testing.T, doc string) {
	readOnly := true
	tl := tool.Tool{Name: "weather_get", Description: "Get the weather.",
		InputSchema: json.RawMessage(`{"type": "object", "properties": {"city": {"type": "string"}}}`),
		Annotations: &tool.Annotations{ReadOnly: &readOnly}}
	got, err := catalog.ToolDefinition(&tl).Canonical()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.ReplaceAll(strings.TrimSpace(doc), "\n ", "")
	if string(got) != want {
		t.Errorf("the catalog pins:\n%s\nthe page says:\n%s", got, want)
	}
}

// docs/console.md's Content-Security-Policy is the console's (the page
// wraps it after "connect-src 'self';").
func checkConsoleCSP(t *testing.T, doc string) {
	want := strings.Join(strings.Fields(strings.TrimPrefix(strings.TrimSpace(doc), "Content-Security-Policy:")), " ")
	if console.CSP != want {
		t.Errorf("the console sends:\n%s\nthe page says:\n%s", console.CSP, want)
	}
}
