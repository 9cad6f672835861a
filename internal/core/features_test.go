package core_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/toolnexus/toolnexus/internal/auth"
	"github.com/toolnexus/toolnexus/internal/config"
	"github.com/toolnexus/toolnexus/internal/core"
	tu "github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/pkg/feature"
)

// Every feature request is counted under its server and outcome and
// audited once: a read, a hidden read (denied under its server, not found
// for the caller), an unknown one (under unknown), a policy's refusal.
func TestFeatureRequestsCountedAndAudited(t *testing.T) {
	t.Parallel()
	alpha := tu.StartFeatureUpstream(t, "alpha", tu.FeatureUpstreamOptions{})
	beta := tu.StartFeatureUpstream(t, "beta", tu.FeatureUpstreamOptions{})
	dir := t.TempDir()
	audit := filepath.Join(dir, "audit.log")
	cfgJSON := tu.FeatureConfig(t, dir, alpha, beta, fmt.Sprintf(`, "audit": {"path": %q}`, audit))
	cfg, err := config.Parse(cfgJSON, filepath.Join(dir, "config.json"), dir)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	c, err := core.New(cfg, core.Options{Logger: slog.New(slog.DiscardHandler), Metrics: reg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	for deadline := time.Now().Add(20 * time.Second); len(c.Features().Prompts()) < 4; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the servers' features never appeared")
		}
	}
	ctx := context.Background()
	full := core.FeatureCall{Caller: auth.NewPrincipal("full", nil, false), Protocol: core.ProtocolGRPC}
	restricted := core.FeatureCall{Caller: auth.NewPrincipal("restricted", []string{"x"}, false), Protocol: core.ProtocolGRPC}
	kinds := map[string]feature.Kind{}
	for _, r := range []struct {
		name string
		fc   core.FeatureCall
		uri  string
	}{{"ok", full, "alpha://only"}, {"hidden", restricted, "alpha://only"}, {"unknown", full, "nobody://x"}, {"forbidden", full, tu.FeatureForbidden}} {
		_, err := c.ReadResource(ctx, r.fc, r.uri)
		var fe *feature.Error
		if errors.As(err, &fe) {
			kinds[r.name] = fe.Kind
		}
	}
	if kinds["hidden"] != feature.NotFound || kinds["unknown"] != feature.NotFound || kinds["forbidden"] != feature.Denied || kinds["ok"] != 0 {
		t.Fatalf("outcomes %v", kinds)
	}
	for labels, want := range map[[4]string]float64{
		{"mcp", "alpha", "ok", "grpc"}: 1, {"mcp", "alpha", "denied", "grpc"}: 1,
		{"unknown", "unknown", "not_found", "grpc"}: 1, {"mcp", "beta", "denied", "grpc"}: 1,
	} {
		if got := featureCount(t, reg, labels); got != want {
			t.Errorf("toolnexus_feature_requests_total%v = %v, want %v", labels, got, want)
		}
	}
	lines := tu.JSONLines(t, audit)
	var seen []string
	for _, l := range lines {
		if l["event"] == "feature" {
			seen = append(seen, fmt.Sprintf("%v %v %v %v", l["principal"], l["target"], l["source"], l["outcome"]))
		}
	}
	want := "full alpha://only mcp/alpha ok|restricted alpha://only mcp/alpha denied|full nobody://x unknown not_found|full beta://only mcp/beta denied"
	if strings.Join(seen, "|") != want {
		t.Errorf("audit lines:\n%s\nwant\n%s", strings.Join(seen, "\n"), strings.ReplaceAll(want, "|", "\n"))
	}
}

// featureCount is toolnexus_feature_requests_total{source, name,
// method="resources/read", outcome, protocol} as reg serves it.
func featureCount(t *testing.T, reg *prometheus.Registry, labels [4]string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "toolnexus_feature_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			if got["source"] == labels[0] && got["name"] == labels[1] && got["method"] == "resources/read" && got["outcome"] == labels[2] && got["protocol"] == labels[3] {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}
