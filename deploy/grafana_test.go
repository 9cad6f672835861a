package deploy_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pb "github.com/toolnexus/toolnexus/gen/toolnexus/v1"
	"github.com/toolnexus/toolnexus/internal/testutil"
	"github.com/toolnexus/toolnexus/internal/testutil/servertest"
	"github.com/toolnexus/toolnexus/pkg/server"
)

type dashboard struct {
	Title      string `json:"title"`
	UID        string `json:"uid"`
	Templating struct {
		List []struct {
			Name  string          `json:"name"`
			Type  string          `json:"type"`
			Query json.RawMessage `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Panels []panel `json:"panels"`
}

type panel struct {
	Title   string  `json:"title"`
	Type    string  `json:"type"`
	Panels  []panel `json:"panels"` // collapsed rows nest theirs
	Targets []struct {
		Expr     string `json:"expr"`
		Exemplar bool   `json:"exemplar"`
	} `json:"targets"`
}

func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	data, err := os.ReadFile("grafana/toolnexus.json")
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("grafana/toolnexus.json: %v", err)
	}
	return d
}

// hasExemplars reports whether a duration query asks for exemplars.
func (d dashboard) hasExemplars() bool {
	var walk func([]panel) bool
	walk = func(ps []panel) bool {
		for _, p := range ps {
			for _, tg := range p.Targets {
				if tg.Exemplar && strings.Contains(tg.Expr, "toolnexus_tool_call_duration_seconds_bucket") {
					return true
				}
			}
			if walk(p.Panels) {
				return true
			}
		}
		return false
	}
	return walk(d.Panels)
}

// exprs returns every PromQL expression, keyed by the panel title.
func (d dashboard) exprs() map[string][]string {
	out := map[string][]string{}
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			for _, tg := range p.Targets {
				out[p.Title] = append(out[p.Title], tg.Expr)
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return out
}

// scrape is what /metrics serves: series name -> label names seen on it.
type scrape map[string]map[string]bool

var sampleLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? `)
var labelName = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="`)

func parseScrape(body string) scrape {
	s := scrape{}
	for _, l := range strings.Split(body, "\n") {
		m := sampleLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if s[m[1]] == nil {
			s[m[1]] = map[string]bool{}
		}
		for _, lm := range labelName.FindAllStringSubmatch(m[2], -1) {
			s[m[1]][lm[1]] = true
		}
	}
	return s
}

var (
	promString   = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	promRange    = regexp.MustCompile(`\[[^\]]*\]`)
	promSelector = regexp.MustCompile(`([a-zA-Z_:][a-zA-Z0-9_:]*)?\s*\{([^}]*)\}`)
	promMatcher  = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)`)
	promGrouping = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)`)
	promIdent    = regexp.MustCompile(`[a-zA-Z_:][a-zA-Z0-9_:]*`)
	promFuncCall = regexp.MustCompile(`[a-zA-Z_][a-zA-Z0-9_]*\s*\(`)
	promNumber   = regexp.MustCompile(`\b[0-9][0-9a-zA-Z_.]*`) // 0.99, 1e3 and durations like 5m
)

var promKeywords = []string{"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless", "offset", "inf", "nan"}

// metricsAndLabels pulls the metric names and the label names out of a
// PromQL expression. Strings and ranges go first (they hold $variables and
// durations), then selectors and grouping clauses give up their labels,
// and what is left that is neither a function call nor a keyword nor a
// number or duration is a metric name.
func metricsAndLabels(expr string) (metrics, labels []string) {
	// Keep the braces of selectors; matcher values are strings.
	e := promString.ReplaceAllString(expr, `""`)
	e = promRange.ReplaceAllString(e, "")
	for _, m := range promSelector.FindAllStringSubmatch(e, -1) {
		if m[1] != "" {
			metrics = append(metrics, m[1])
		}
		for _, lm := range promMatcher.FindAllStringSubmatch(m[2], -1) {
			labels = append(labels, lm[1])
		}
	}
	e = promSelector.ReplaceAllString(e, " ")
	for _, g := range promGrouping.FindAllStringSubmatch(e, -1) {
		for _, l := range strings.Split(g[1], ",") {
			if l = strings.TrimSpace(l); l != "" {
				labels = append(labels, l)
			}
		}
	}
	e = promGrouping.ReplaceAllString(e, " ")
	e = promFuncCall.ReplaceAllString(e, "(")
	e = promNumber.ReplaceAllString(e, " ")
	for _, id := range promIdent.FindAllString(e, -1) {
		if !slices.Contains(promKeywords, strings.ToLower(id)) {
			metrics = append(metrics, id)
		}
	}
	slices.Sort(metrics)
	slices.Sort(labels)
	return slices.Compact(metrics), slices.Compact(labels)
}

func TestMetricsAndLabelsParser(t *testing.T) {
	m, l := metricsAndLabels(`sum by (source, outcome) (rate(a_total{source=~"$source", outcome!="ok"}[$__rate_interval]))
/ ignoring (outcome) group_left sum by (source) (rate(a_total[5m])) > bool 0.5 or b_seconds offset 5m`)
	if strings.Join(m, ",") != "a_total,b_seconds" {
		t.Errorf("metrics = %v", m)
	}
	if strings.Join(l, ",") != "outcome,source" {
		t.Errorf("labels = %v", l)
	}
}

// targetLabels are attached by Prometheus when it scrapes (job, instance,
// and the Kubernetes ones from the ServiceMonitor), so a single server's
// /metrics cannot show them.
var targetLabels = []string{"job", "instance", "pod", "namespace", "service", "container", "endpoint", "le"}

// serveAndScrape runs a real server with the debug tools, makes calls that
// create every series the dashboard reads (unless fresh), and scrapes it.
func serveAndScrape(t *testing.T, fresh bool) scrape {
	t.Helper()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "toolnexus.json")
	// With a control plane (cluster.redis), so its row has series too.
	redis := testutil.StartRedis(t)
	if err := os.WriteFile(cfg, []byte(`{"debug": true, "skills": [], "cluster": {"name": "test", "redis": {"url": "`+redis.URL+`"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	srv, stop := servertest.Start(t, server.Options{ConfigPath: cfg, Listen: "127.0.0.1:0", MetricsListen: "127.0.0.1:0",
		Workspace: filepath.Join(dir, "ws"), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	defer stop()
	conn, err := grpc.NewClient(srv.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	reg := pb.NewRegistryServiceClient(conn)
	if fresh {
		return scrapeMetrics(t, srv)
	}
	for _, c := range []struct{ name, args string }{
		{"debug_echo", `{"a":1}`}, {"debug_fail", `{"message":"x"}`},
		{"no_such_tool", `{}`}, {"read", `{"path":"missing.txt"}`},
	} {
		if _, err := reg.Execute(context.Background(), &pb.ExecuteRequest{Name: c.name, Input: &pb.ExecuteRequest_ArgumentsJson{ArgumentsJson: c.args}}); err != nil {
			t.Fatalf("Execute %s: %v", c.name, err)
		}
	}
	if _, err := pb.NewSourceServiceClient(conn).Reload(context.Background(), &pb.ReloadRequest{}); err != nil {
		t.Fatalf("Reload: %v", err)
	}
	return scrapeMetrics(t, srv)
}

func scrapeMetrics(t *testing.T, srv *server.Server) scrape {
	t.Helper()
	resp, err := http.Get("http://" + srv.MetricsAddr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return parseScrape(string(body))
}

// TestDashboardQueriesExist checks every query of the dashboard against a
// real scrape: each metric it names is exported, each label it filters or
// groups by is on one of those metrics.
func TestDashboardQueriesExist(t *testing.T) {
	checkDashboard(t, serveAndScrape(t, false))
}

// A fresh server — no call made, no reload — already exports every series
// the dashboard queries, so a new deployment shows 0, never "No data".
func TestFreshServerHasEveryDashboardSeries(t *testing.T) {
	checkDashboard(t, serveAndScrape(t, true))
}

func checkDashboard(t *testing.T, s scrape) {
	t.Helper()
	d := loadDashboard(t)

	exprs := d.exprs()
	if len(exprs) == 0 {
		t.Fatal("the dashboard has no queries")
	}
	var all []string
	for title, list := range exprs {
		for _, expr := range list {
			all = append(all, expr)
			metrics, labels := metricsAndLabels(expr)
			if len(metrics) == 0 {
				t.Errorf("panel %q: no metric in %q", title, expr)
			}
			have := map[string]bool{}
			for _, m := range metrics {
				if s[m] == nil {
					t.Errorf("panel %q: metric %s is not in the server's /metrics", title, m)
				}
				for l := range s[m] {
					have[l] = true
				}
			}
			for _, l := range labels {
				if !have[l] && !slices.Contains(targetLabels, l) {
					t.Errorf("panel %q: label %s is on none of %v", title, l, metrics)
				}
			}
			if strings.HasPrefix(strings.Join(metrics, " "), "toolnexus_") && have["source"] && !strings.Contains(expr, `source=~"$source"`) {
				t.Errorf("panel %q: %q ignores the $source variable", title, expr)
			}
		}
	}

	// The variable the whole dashboard is cut by.
	var sourceVar bool
	for _, v := range d.Templating.List {
		if v.Name != "source" {
			continue
		}
		sourceVar = true
		q := string(v.Query)
		m := regexp.MustCompile(`label_values\((\w+),\s*(\w+)\)`).FindStringSubmatch(q)
		if m == nil || s[m[1]] == nil || !s[m[1]][m[2]] {
			t.Errorf("variable source query %s must be label_values over an exported metric and label", q)
		}
	}
	if !sourceVar {
		t.Error("the dashboard has no source variable")
	}
	if !d.hasExemplars() {
		t.Error("no latency query shows exemplars (the links to traces)")
	}

	// The panels the issue asks for.
	joined := strings.Join(all, "\n")
	for _, want := range []string{
		"rate(toolnexus_tool_calls_total{", // calls/s
		`outcome!="ok"`,                    // error ratio by outcome
		"histogram_quantile(0.5, sum by (source, le) (rate(toolnexus_tool_call_duration_seconds_bucket",  // p50
		"histogram_quantile(0.99, sum by (source, le) (rate(toolnexus_tool_call_duration_seconds_bucket", // p99
		"toolnexus_tools{",     // tools registered
		"toolnexus_source_up{", // sources up
		"toolnexus_sessions",   // sessions
		"toolnexus_session_bytes",
		`outcome="denied"`,                  // audit-relevant refusals
		"toolnexus_sandbox_refusals_total{", // sandbox refusals by reason
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("no query contains %s", want)
		}
	}
}
