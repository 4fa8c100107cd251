package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"sigs.k8s.io/yaml"

	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/provider"
	"github.com/kpool/kpool/provider/catalog/clouds"
)

// The monitoring kpool ships: Prometheus alert rules and a Grafana
// dashboard (README.md, Metrics).
const (
	rulesFile     = "../../deploy/prometheus/kpool-rules.yaml"
	dashboardFile = "../../deploy/grafana/kpool.json"
)

// seriesName finds the series a PromQL expression names: kpool's, and the
// Go runtime's and process's that the dashboard shows beside them.
var seriesName = regexp.MustCompile(`\b(?:kpool|go|process)_[a-zA-Z0-9_]+`)

// TestShippedRulesAndDashboard: every series the shipped alert rules and
// dashboard name is one that kpool serve's /metrics serves (its registry
// built as kpool serve builds it, with the controllers, and scraped once
// it has served a request), and promtool accepts the rules where it is
// installed.
func TestShippedRulesAndDashboard(t *testing.T) {
	served := scrape(t)
	exprs := append(ruleExprs(t, rulesFile), dashboardExprs(t, dashboardFile)...)
	if len(exprs) < 20 {
		t.Fatalf("%d expressions in the rules and dashboard: too few, the files were not read", len(exprs))
	}
	for _, name := range missingSeries(exprs, served) {
		t.Errorf("%s is named by the rules or the dashboard but not served on /metrics", name)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for name := range served {
		if strings.HasPrefix(name, "kpool_") && !regexp.MustCompile(`\b`+name+`\b`).Match(readme) &&
			!strings.HasSuffix(name, "_bucket") && !strings.HasSuffix(name, "_sum") && !strings.HasSuffix(name, "_count") {
			t.Errorf("%s is served on /metrics but README.md's Monitoring does not describe it", name)
		}
	}
	t.Run("promtool", func(t *testing.T) {
		promtool, err := exec.LookPath("promtool")
		if err != nil {
			t.Skip("promtool is not installed (Debian: apt-get install prometheus): the rules' syntax is not checked")
		}
		out, err := exec.Command(promtool, "check", "rules", rulesFile).CombinedOutput()
		if err != nil {
			t.Fatalf("promtool check rules: %v\n%s", err, out)
		}
	})
}

// TestMissingSeries: the check above finds a series nothing serves,
// whether the name is whole, a histogram's bucket, or one of several.
func TestMissingSeries(t *testing.T) {
	served := map[string]bool{"kpool_clusters": true, "kpool_x_seconds_bucket": true}
	tests := []struct {
		expr string
		want []string
	}{
		{`max(kpool_clusters{status="False"}) > 0`, nil},
		{`histogram_quantile(0.9, sum by (le) (rate(kpool_x_seconds_bucket[5m])))`, nil},
		{`rate(kpool_nope_total[5m]) / kpool_clusters`, []string{"kpool_nope_total"}},
		{`kpool_x_seconds_count`, []string{"kpool_x_seconds_count"}},
	}
	for _, tc := range tests {
		if got := missingSeries([]string{tc.expr}, served); !slices.Equal(got, tc.want) {
			t.Errorf("%s: missing %v, want %v", tc.expr, got, tc.want)
		}
	}
}

// missingSeries returns the series names exprs use that served lacks.
func missingSeries(exprs []string, served map[string]bool) []string {
	var out []string
	for _, e := range exprs {
		for _, name := range seriesName.FindAllString(e, -1) {
			if !served[name] && !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	return out
}

// scrape starts what kpool serve runs (the controllers made, not run),
// sends it an API and a dashboard request, and returns the series names
// its /metrics serves: a histogram's _bucket, _sum and _count, a
// summary's _sum and _count.
func scrape(t *testing.T) map[string]bool {
	t.Helper()
	f := serveFlags{listen: "127.0.0.1:0", database: "sqlite:" + filepath.Join(t.TempDir(), "kpool.db"), logFormat: "text", auth: auth.AuthToken,
		resyncFast: time.Second, resyncSlow: time.Minute, driftInterval: time.Minute, callTimeout: time.Second, logOut: io.Discard, reconcile: true}
	p, err := start(context.Background(), &f, clouds.Registry(provider.DriverOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.close)
	srv := httptest.NewServer(p.handler(api.NewServer(p.svc, p.access, p.log)))
	t.Cleanup(srv.Close)
	for _, path := range []string{"/healthz", "/login", "/metrics"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s", path, resp.Status)
		}
		if path != "/metrics" {
			continue
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		mfs, err := parser.TextToMetricFamilies(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return seriesNames(t, mfs)
	}
	return nil
}

// seriesNames lists the series of the families, checking on the way that
// the dashboard's request was counted under its route's pattern.
func seriesNames(t *testing.T, mfs map[string]*dto.MetricFamily) map[string]bool {
	t.Helper()
	served := map[string]bool{}
	for name, mf := range mfs {
		served[name] = true
		switch mf.GetType() {
		case dto.MetricType_HISTOGRAM:
			served[name+"_bucket"], served[name+"_sum"], served[name+"_count"] = true, true, true
		case dto.MetricType_SUMMARY:
			served[name+"_sum"], served[name+"_count"] = true, true
		}
	}
	routes := map[string]bool{}
	for _, m := range mfs["kpool_http_requests_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "route" {
				routes[l.GetValue()] = true
			}
		}
	}
	if !routes["/healthz"] || !routes["/login"] {
		t.Errorf("kpool_http_requests_total routes %v: want /healthz (the API's) and /login (the dashboard's)", routes)
	}
	return served
}

// ruleExprs reads the expressions of a Prometheus rules file.
func ruleExprs(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Groups []struct {
			Name  string `json:"name"`
			Rules []struct {
				Alert string `json:"alert"`
				Expr  string `json:"expr"`
			} `json:"rules"`
		} `json:"groups"`
	}
	if err := yaml.UnmarshalStrict(b, &doc, yaml.DisallowUnknownFields); err != nil {
		// Annotations and labels are not declared: read leniently.
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	var out []string
	for _, g := range doc.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" || r.Expr == "" {
				t.Errorf("%s: group %s has a rule without alert or expr", path, g.Name)
			}
			out = append(out, r.Expr)
		}
	}
	return out
}

// dashboardExprs reads every query of a Grafana dashboard: the panels'
// targets and the variables' queries.
func dashboardExprs(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && (k == "expr" || k == "query" || k == "definition") {
					out = append(out, s)
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc)
	return out
}
