package server_test

import (
	"strings"
	"testing"

	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/sources"
	"github.com/toolnexus/toolnexus/pkg/tool"
)

// Every series whose label values are known exists from the first scrape:
// both reload results at 0, calls_total at 0 for every outcome and
// protocol (under source="unknown"), and source_up for every configured
// source — one that failed to start and one that is disabled included.
func TestFirstScrapeHasEveryKnownSeries(t *testing.T) {
	t.Parallel()
	f := start(t, `{"builtins": false, "mcpServers": {
		"broken": {"command": "/nonexistent/toolnexus-test-server"},
		"off": {"command": "/nonexistent/other", "disabled": true}}}`)
	body := f.scrape(t)
	for _, want := range []struct {
		name   string
		labels []string
		value  string
	}{
		{"toolnexus_reloads_total", []string{`result="ok"`}, " 0"},
		{"toolnexus_reloads_total", []string{`result="error"`}, " 0"},
		{"toolnexus_source_up", []string{`source="mcp"`, `name="broken"`}, " 0"},
		{"toolnexus_source_up", []string{`source="mcp"`, `name="off"`}, " 0"},
		{"toolnexus_tool_calls_total", []string{`outcome="denied"`, `protocol="grpc"`}, " 0"},
		{"toolnexus_tool_calls_total", []string{`outcome="ok"`, `protocol="mcp"`}, " 0"},
		{"toolnexus_tool_calls_total", []string{`outcome="timeout"`, `protocol="grpc"`}, " 0"},
	} {
		line := testutil.MetricLine(body, want.name, want.labels...)
		if !strings.HasSuffix(line, want.value) {
			t.Errorf("%s%v = %q, want a series at%s", want.name, want.labels, line, want.value)
		}
	}
	// Every shipped source kind has every refusal reason at 0.
	for _, k := range sources.Kinds() {
		for _, r := range tool.Refusals() {
			labels := []string{`source="` + k.Name + `"`, `reason="` + r.String() + `"`}
			if line := testutil.MetricLine(body, "toolnexus_sandbox_refusals_total", labels...); !strings.HasSuffix(line, " 0") {
				t.Errorf("toolnexus_sandbox_refusals_total%v = %q, want a series at 0", labels, line)
			}
		}
		// Policy decisions and rate limits too, with no policy configured.
		if line := testutil.MetricLine(body, "toolnexus_rate_limited_total", `source="`+k.Name+`"`); !strings.HasSuffix(line, " 0") {
			t.Errorf("toolnexus_rate_limited_total{source=%q} = %q, want a series at 0", k.Name, line)
		}
		for _, d := range []string{"allow", "deny", "approval", "shadow_deny"} {
			labels := []string{`source="` + k.Name + `"`, `decision="` + d + `"`}
			if line := testutil.MetricLine(body, "toolnexus_policy_decisions_total", labels...); !strings.HasSuffix(line, " 0") {
				t.Errorf("toolnexus_policy_decisions_total%v = %q, want a series at 0", labels, line)
			}
		}
	}
}

// /metrics speaks OpenMetrics to a scraper that asks for it (that is how
// exemplars reach Prometheus), and the text format otherwise.
func TestMetricsNegotiatesOpenMetrics(t *testing.T) {
	t.Parallel()
	f := start(t, `{"builtins": false, "debug": true}`)
	f.exec(t, "debug_echo", `{}`)
	for accept, want := range map[string]string{
		"application/openmetrics-text; version=1.0.0": "application/openmetrics-text",
		"": "text/plain",
	} {
		ct, body := f.scrapeAs(t, accept)
		if !strings.HasPrefix(ct, want) {
			t.Errorf("Accept %q: Content-Type %q, want %s", accept, ct, want)
		}
		if want == "application/openmetrics-text" && !strings.HasSuffix(strings.TrimSpace(body), "# EOF") {
			t.Errorf("OpenMetrics body does not end in # EOF")
		}
	}
}
