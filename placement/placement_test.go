package placement

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/provider/catalog"
)

var update = flag.Bool("update", false, "rewrite the golden files from what Place returns")

// fixture is a cluster of testdata/clusters.yaml.
type fixture struct {
	Cluster kpool.Cluster     `json:"cluster"`
	Pools   []*kpool.NodePool `json:"pools"`
}

func clusters(tb testing.TB) map[string]*Cluster {
	tb.Helper()
	data, err := os.ReadFile("testdata/clusters.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	var fs map[string]*fixture
	if err := yaml.UnmarshalStrict(data, &fs); err != nil {
		tb.Fatal(err)
	}
	out := map[string]*Cluster{}
	for name, f := range fs {
		c := f.Cluster
		out[name] = &Cluster{Cluster: &c, Pools: f.Pools, Profile: catalog.Registry().Profile(c.Spec.Platform.Type)}
	}
	return out
}

// options parses a case's "# place:" line, the flags of kpool place.
func options(t *testing.T, input string, cs map[string]*Cluster) Options {
	t.Helper()
	first, _, _ := strings.Cut(input, "\n")
	args, ok := strings.CutPrefix(first, "# place:")
	if !ok {
		t.Fatalf("the case's first line is not # place: [flags]")
	}
	o := Options{DefaultPool: DefaultPool}
	fs := flag.NewFlagSet("place", flag.ContinueOnError)
	var pools, zones, cluster, app string
	fs.StringVar(&o.Intent.Pool, "pool", "", "")
	fs.StringVar(&pools, "pools", "", "")
	fs.StringVar(&o.Intent.Zone, "zone", "", "")
	fs.StringVar(&zones, "zones", "", "")
	fs.StringVar(&cluster, "cluster", "", "")
	fs.StringVar(&o.DefaultPool, "default-pool", DefaultPool, "")
	fs.BoolVar(&o.NoTolerations, "no-tolerations", false, "")
	fs.StringVar(&app, "app", "", "")
	if err := fs.Parse(strings.Fields(args)); err != nil {
		t.Fatal(err)
	}
	o.Intent.Pools, o.Intent.Zones = list(pools), list(zones)
	if cluster != "" {
		if o.Cluster = cs[cluster]; o.Cluster == nil {
			t.Fatalf("no cluster %q in testdata/clusters.yaml", cluster)
		}
	}
	if app != "" {
		data, err := os.ReadFile(filepath.Join("testdata", app))
		if err != nil {
			t.Fatal(err)
		}
		if o.App, err = ReadApp(app, data); err != nil {
			t.Fatal(err)
		}
		o.AppName = app
	}
	return o
}

// render is what a golden file holds: the manifests and warnings, or the
// error's fields.
func render(res *Result, err error) string {
	var b strings.Builder
	if err != nil {
		var e *kpool.Error
		if !errors.As(err, &e) {
			return "=== error (not a kpool.Error)\n" + err.Error() + "\n"
		}
		fmt.Fprintf(&b, "=== error %s: %s\n", e.Code, e.Message)
		for _, f := range e.Fields {
			fmt.Fprintf(&b, "%s: %s\n", f.Field, f.Reason)
		}
		return b.String()
	}
	fmt.Fprintf(&b, "=== %d workloads placed\n", res.Placed)
	b.WriteString(res.Manifests)
	if len(res.Warnings) > 0 {
		b.WriteString("=== warnings\n")
		for _, w := range res.Warnings {
			b.WriteString(w.String() + "\n")
		}
	}
	return b.String()
}

// TestGolden places each testdata/*.yaml case with the flags on its first
// line and compares the result with its .golden file.
func TestGolden(t *testing.T) {
	cs := clusters(t)
	cases, err := filepath.Glob("testdata/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, path := range cases {
		name := strings.TrimSuffix(filepath.Base(path), ".yaml")
		if name == "clusters" || name == "app" {
			continue
		}
		n++
		t.Run(name, func(t *testing.T) {
			in, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got := render(Place(in, options(t, string(in), cs)))
			golden := strings.TrimSuffix(path, ".yaml") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./placement -run TestGolden -update to write it)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from what Place returns:\n--- want\n%s\n--- got\n%s", golden, want, got)
			}
		})
	}
	if n == 0 {
		t.Fatal("no cases in testdata")
	}
}

// BenchmarkPlace places an app of 100 Deployments and 100 Services against
// the prod cluster, the size of a large Helm release.
func BenchmarkPlace(b *testing.B) {
	o := Options{DefaultPool: DefaultPool, Cluster: clusters(b)["prod"]}
	var in strings.Builder
	for i := range 100 {
		fmt.Fprintf(&in, `apiVersion: apps/v1
kind: Deployment
metadata: {name: web-%d, annotations: {kompox.dev/pools: "user,spot", kompox.dev/zones: "1,2"}}
spec:
  replicas: 3
  selector: {matchLabels: {app: web-%d}}
  template:
    metadata: {labels: {app: web-%d}}
    spec:
      tolerations: [{key: example.com/maintenance, operator: Exists}]
      containers: [{name: web, image: "nginx:1.27", ports: [{containerPort: 8080}], resources: {requests: {cpu: 100m, memory: 128Mi}}}]
---
apiVersion: v1
kind: Service
metadata: {name: web-%d}
spec: {selector: {app: web-%d}, ports: [{port: 80, targetPort: 8080}]}
---
`, i, i, i, i, i)
	}
	manifests := []byte(in.String())
	b.SetBytes(int64(len(manifests)))
	b.ReportAllocs()
	for b.Loop() {
		res, err := Place(manifests, o)
		if err != nil || res.Placed != 100 {
			b.Fatalf("%v, %d placed", err, res.Placed)
		}
	}
}

// TestMaxDocuments: a placement takes at most MaxDocuments documents, and
// says so before any is decoded.
func TestMaxDocuments(t *testing.T) {
	doc := "kind: Pod\nmetadata: {name: p}\nspec: {containers: []}\n"
	if _, err := Place([]byte(strings.Repeat(doc+"---\n", MaxDocuments-1)+doc), Options{}); err != nil {
		t.Fatalf("%d documents: %v", MaxDocuments, err)
	}
	_, err := Place([]byte(strings.Repeat(doc+"---\n", MaxDocuments)+doc), Options{})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%d documents: at most %d", MaxDocuments+1, MaxDocuments)) {
		t.Fatalf("%d documents: %v", MaxDocuments+1, err)
	}
}
