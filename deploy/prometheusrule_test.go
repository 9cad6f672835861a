package deploy_test

import (
	"slices"
	"testing"
)

// The alerts query what a fresh server exports (no call, no reload yet),
// with labels those metrics carry, so no rule sits silent on "no data";
// and the four the operators asked for are there.
func TestPrometheusRuleAlertsQueryRealSeries(t *testing.T) {
	var rule struct {
		Kind string `yaml:"kind"`
		Spec struct {
			Groups []struct {
				Rules []struct {
					Alert string `yaml:"alert"`
					Expr  string `yaml:"expr"`
					For   string `yaml:"for"`
				} `yaml:"rules"`
			} `yaml:"groups"`
		} `yaml:"spec"`
	}
	readYAML(t, "kubernetes/base/prometheusrule.yaml", &rule)
	if rule.Kind != "PrometheusRule" {
		t.Fatalf("kind %q", rule.Kind)
	}
	s := serveAndScrape(t, true)
	var alerts []string
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			alerts = append(alerts, r.Alert)
			if r.For == "" {
				t.Errorf("%s: no `for`, so a blip pages", r.Alert)
			}
			metrics, labels := metricsAndLabels(r.Expr)
			have := map[string]bool{}
			for _, m := range metrics {
				if s[m] == nil {
					t.Errorf("%s: metric %s is not in a fresh server's /metrics", r.Alert, m)
				}
				for l := range s[m] {
					have[l] = true
				}
			}
			for _, l := range labels {
				if !have[l] {
					t.Errorf("%s: label %s is on none of %v", r.Alert, l, metrics)
				}
			}
		}
	}
	for _, want := range []string{"ToolnexusSourceDown", "ToolnexusAuthFailures", "ToolnexusRateLimiting", "ToolnexusApprovalsWaiting"} {
		if !slices.Contains(alerts, want) {
			t.Errorf("no alert %s (have %v)", want, alerts)
		}
	}
}
