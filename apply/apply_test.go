package apply

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kpool/kpool/auth"
	"github.com/kpool/kpool/service"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
	"github.com/kpool/kpool/provider/catalog"
	"github.com/kpool/kpool/provider/fake"
	"github.com/kpool/kpool/store/testdb"
)

const user = "dev@example.com"

// newClient starts the real API on an SQLite store, with GCP pools under
// the fake driver, and returns a client of user's.
func newClient(t *testing.T) *api.Client {
	t.Helper()
	reg := catalog.Registry()
	reg.Add(fake.New(fake.Options{Platform: kpool.PlatformGCP}))
	access, err := auth.NewAccess(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.NewServer(service.New(testdb.SQLite(t), reg), access, slog.New(slog.NewTextHandler(io.Discard, nil))))
	t.Cleanup(srv.Close)
	return api.NewClient(srv.URL, user)
}

// cluster registers a GCP cluster of that name and returns its ID.
func cluster(t *testing.T, c *api.Client, name string) string {
	t.Helper()
	spec := `{"platform":{"type":"gcp","gcp":{"projectId":"acme-prod","location":"us-central1","clusterName":"` + name + `"}}}`
	cl, err := c.CreateCluster(context.Background(), api.ClusterBody{Name: &name, Spec: json.RawMessage(spec)})
	if err != nil {
		t.Fatal(err)
	}
	return cl.ID
}

// docs reads a file's documents, with IDS standing for the clusters' IDs.
func docs(t *testing.T, yaml string, ids map[string]string) []Document {
	t.Helper()
	for name, id := range ids {
		yaml = strings.ReplaceAll(yaml, "ID_OF_"+name, id)
	}
	d, err := Read([]byte(yaml), "test")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// run applies a file (its ID_OF_ names none) and returns the results.
func run(t *testing.T, c *api.Client, file string, o Options) []Result {
	t.Helper()
	rep, err := Run(context.Background(), c, docs(t, file, nil), o)
	if err != nil {
		t.Fatal(err)
	}
	return rep.Results
}

// TestRun: each document is found by its name in its cluster and planned
// (created, updated, unchanged, or refused with why); a file with any
// refusal writes nothing, and every refusal is named.
func TestRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newClient(t)
	ids := map[string]string{"prod": cluster(t, c, "prod"), "stage": cluster(t, c, "stage")}
	web := "name: web\ncluster: prod\nspec: {nodeCount: 2, platform: {gcp: {machineType: e2-small}}}\n"
	if rs := run(t, c, web, Options{}); len(rs) != 1 || rs[0].Action != Create {
		t.Fatalf("the first pool: %+v", rs)
	}

	type want struct {
		action Action
		label  string
		err    string // in the error's details or message
	}
	for _, tt := range []struct {
		name  string
		file  string
		def   string // the default cluster
		wrote bool
		want  []want
	}{
		{"unchanged", web, "", true, []want{{Unchanged, "web in cluster prod", ""}}},
		{"a plan", "name: web\ncluster: prod\nspec: {nodeCount: 3, platform: {gcp: {machineType: e2-small}}}\n---\nname: batch\ncluster_id: ID_OF_prod\nspec: {nodeCount: 1, platform: {gcp: {machineType: e2-small}}}\n", "", false,
			[]want{{Update, "web in cluster prod", ""}, {Create, "batch in cluster prod", ""}}},
		{"the default cluster", "name: web\nspec: {nodeCount: 1, platform: {gcp: {machineType: e2-small}}}\n", "stage", true,
			[]want{{Create, "web in cluster stage", ""}}},
		{"refusals", `
spec: {nodeCount: 1}
---
name: lost
cluster: nowhere
---
name: web
cluster: prod
---
name: twice
cluster: prod
spec: {nodeCount: 1, platform: {gcp: {machineType: e2-small}}}
---
name: twice
cluster_id: ID_OF_prod
spec: {nodeCount: 1, platform: {gcp: {machineType: e2-small}}}
---
name: mixed
cluster: stage
cluster_id: ID_OF_prod
---
name: web
cluster: stage
id: 00000000-0000-4000-8000-000000000000
spec: {nodeCount: 1}
---
name: bad
cluster: prod
spec: {nodeCount: -1, platform: {gcp: {machineType: e2-small}}}
`, "", false, []want{
			{Refused, "(no name)", "name: is required: the pool is found by its name within its cluster; cluster_id: is required"},
			{Refused, "lost in cluster nowhere", `No cluster named "nowhere"`},
			{Refused, "web in cluster prod", "spec.platform"},
			{Create, "twice in cluster prod", ""},
			{Refused, "twice in cluster prod", `the file has node pool "twice" in cluster prod more than once`},
			{Refused, "mixed in cluster stage", `cluster: "stage" is cluster ` + ids["stage"] + ", but cluster_id is " + ids["prod"]},
			{Refused, "web in cluster stage", "id: 00000000-0000-4000-8000-000000000000, but node pool web in cluster stage is "},
			{Refused, "bad in cluster prod", "spec.nodeCount"},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := Options{DefaultCluster: tt.def, DryRun: !tt.wrote && tt.name == "a plan"}
			rep, err := Run(ctx, c, docs(t, tt.file, ids), o)
			if err != nil || rep.Wrote != tt.wrote {
				t.Errorf("wrote %v (%v), want %v", rep.Wrote, err, tt.wrote)
			}
			rs := rep.Results
			if len(rs) != len(tt.want) {
				t.Fatalf("%d results for %d pools: %+v", len(rs), len(tt.want), rs)
			}
			for i, w := range tt.want {
				r := rs[i]
				if r.Action != w.action || r.Label() != w.label {
					t.Errorf("%d: %s %q, want %s %q (%v)", i, r.Action, r.Label(), w.action, w.label, r.Error)
				}
				switch {
				case w.err == "" && r.Error != nil:
					t.Errorf("%d: %v", i, r.Error)
				case w.err != "" && (r.Error == nil || !strings.Contains(r.Error.Error(), w.err)):
					t.Errorf("%d: error %v, want %q", i, r.Error, w.err)
				}
			}
		})
	}

	// The plan and the refused file changed nothing.
	prod, err := c.NodePools(ctx, service.ListOptions{ClusterID: ids["prod"]})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range prod.NodePools {
		if p.Name != "web" || p.Spec.Count() != 2 || p.Generation != 1 {
			t.Errorf("a dry run or a refused file changed %s: %+v", p.Name, p.Spec)
		}
	}
}

// TestDryRunRefusal: a change the provider makes only with a new pool is an
// update in the plan, refused as the write would be.
func TestDryRunRefusal(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	prod := cluster(t, c, "prod")
	file := "name: web\ncluster_id: " + prod + "\nspec: {nodeCount: 1, platform: {gcp: {machineType: e2-small}}}\n"
	if rs := run(t, c, file, Options{}); rs[0].Action != Create {
		t.Fatalf("create: %+v", rs[0])
	}
	more := strings.Replace(file, "nodeCount: 1", "nodeCount: 4", 1)
	r := run(t, c, more, Options{DryRun: true})[0]
	if r.Action != Update || r.Plan == nil || len(r.Plan.Changes) != 1 || r.Plan.Changes[0].Field != "spec.nodeCount" {
		t.Errorf("plan of a scale: %+v", r)
	}
	if r.Live == nil || r.Live.Spec.Count() != 1 || r.NodePool == nil || r.NodePool.Spec.Count() != 4 {
		t.Errorf("before and after: %+v, %+v", r.Live, r.NodePool)
	}
	// Live is not part of the result's JSON (apply -o json).
	b, err := json.Marshal(r)
	if err != nil || strings.Contains(string(b), "Live") || !strings.Contains(string(b), `"action":"update"`) {
		t.Errorf("JSON: %s, %v", b, err)
	}
}
