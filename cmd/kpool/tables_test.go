package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/kpool/kpool"
	"github.com/kpool/kpool/api"
)

// tablesNow is the clock of the table tests.
var tablesNow = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

// realisticPools are pools with the longest names and machine types that
// a person meets: what the default table must fit in 80 columns.
func realisticPools() []*kpool.NodePool {
	// The platform block as the API's JSON: cmd/kpool's tests name no
	// cloud's types (seam_test.go).
	mk := func(name, cluster, platform string, count, ready int, ph kpool.Phase) *kpool.NodePool {
		p := &kpool.NodePool{ID: "0b1f4c2e-0000-4000-8000-0000000000" + name[:2], Name: name, ClusterID: cluster,
			CreatedAt: tablesNow.Add(-76 * time.Hour)}
		if err := json.Unmarshal([]byte(platform), &p.Spec.Platform); err != nil {
			panic(err)
		}
		p.Spec.NodeCount = &count
		p.Spec.Labels = map[string]string{"team": "web", "tier": "frontend"}
		p.Status.Phase = ph
		p.Status.Nodes = &kpool.NodeCounts{Total: ready, Ready: ready}
		p.Status.Message = "Creating at azure: waiting for the agent pool to reach Succeeded (operation 1f2e3d4c)"
		return p
	}
	return []*kpool.NodePool{
		mk("web-frontend", "c-aks", `{"type":"azure","azure":{"vmSize":"Standard_D4s_v5"}}`, 12, 10, kpool.PhaseProvisioning),
		mk("gpu-training", "c-oke", `{"type":"oci","oci":{"shape":"VM.Standard.E4.Flex"}}`, 100, 100, kpool.PhaseReady),
		mk("batch-jobs", "c-gke", `{"type":"gcp","gcp":{"machineType":"n2-standard-4"}}`, 3, 3, kpool.PhaseUpdating),
	}
}

// knownNames is a name cache that has already listed the clusters and
// pools: the table tests reach no server.
func knownNames() *shown {
	return &shown{
		clusters:    map[string]string{"c-aks": "prod-aks-eu", "c-oke": "prod-oke-us", "c-gke": "staging-gke"},
		pools:       map[string]string{"p-web": "web-frontend"},
		poolsListed: true,
	}
}

func realisticEvents() *api.EventList {
	at := tablesNow.Add(-5 * time.Minute)
	detail := "spec.nodeCount 3 -> 12, spec.labels.team web -> web-frontend, spec.autoscaling.enabled false -> true"
	return &api.EventList{Events: []kpool.Event{
		{ID: 3, Type: "nodepool.updated", ObjectID: "p-web", ClusterID: "c-aks", Actor: "controllers@kpool.internal", Detail: detail, CreatedAt: at},
		{ID: 2, Type: "nodepool.status", ObjectID: "p-web", ClusterID: "c-aks", Actor: "controllers@kpool.internal",
			Detail: "civo-nodepool-controller: Ready=True (NodesReady), Progressing=False", CreatedAt: at},
		{ID: 1, Type: "cluster.created", ObjectID: "c-aks", ClusterID: "c-aks", Actor: "dev@kpool.example", CreatedAt: at},
		{ID: 5, Type: "nodepool.deleted", ObjectID: "0b1f4c2e-0000-4000-8000-000000000008", ObjectName: "old-batch", ClusterID: "c-aks", Actor: "bob@example.com", CreatedAt: at},
		{ID: 4, Type: "logicalpool.created", ObjectID: "0b1f4c2e-0000-4000-8000-000000000007", ObjectName: "lp-web", ClusterID: "c-aks", Actor: "bob@example.com", CreatedAt: at},
		{ID: 0, Type: "nodepool.deleted", ObjectID: "0b1f4c2e-0000-4000-8000-000000000009", ClusterID: "c-gone", Actor: "bob@example.com", CreatedAt: at},
	}}
}

// TestTablesFit80: the default tables of realistic objects fit 80 columns
// and name clusters and pools; -o wide adds the IDs.
func TestTablesFit80(t *testing.T) {
	t.Parallel()
	clusters := []*kpool.Cluster{{ID: "c-aks", Name: "prod-aks-eu", Team: "platform", CreatedAt: tablesNow.Add(-40 * 24 * time.Hour)}}
	clusters[0].Spec.Platform.Type = "azure"
	clusters[0].Status.Phase = kpool.ClusterActive
	clusters[0].Status.Conditions = []kpool.Condition{{Type: kpool.ConditionReachable, Status: kpool.ConditionFalse, Reason: "NoCredential"}}
	tests := []struct {
		name       string
		table      func(w io.Writer, wide bool)
		want       []string // in the default table
		wantWide   []string // in the wide one only
		notDefault []string
	}{
		{"pools", func(w io.Writer, wide bool) { poolTable(w, realisticPools(), knownNames(), wide, tablesNow) },
			[]string{"NAME", "CLUSTER", "prod-aks-eu", "VM.Standard.E4.Flex", "10/12", "100/100", "Provisioning", "3d4h"},
			[]string{"HEALTH", "c-aks", "0b1f4c2e-0000-4000-8000-0000000000we", "team=web", "Creating at azure"}, []string{"c-aks", "0b1f4c2e"}},
		{"clusters", func(w io.Writer, wide bool) { clusterTable(w, clusters, wide, tablesNow) },
			[]string{"prod-aks-eu", "azure", "platform", "no (NoCredential)", "40d"}, []string{"REGION", "c-aks"}, []string{"c-aks"}},
		{"events", func(w io.Writer, wide bool) { eventTable(w, realisticEvents(), knownNames(), wide, tablesNow) },
			[]string{"AGE", "ACTION", "updated", "pool web-frontend", "cluster prod-aks-eu", "civo-nodepool-controller   Ready\n", "controllers@…", "spec.nodeCount",
				"pool 0b1f4c2e ", "pool old-batch", "logicalpool lp-web"},
			[]string{"TIME", "TYPE", "nodepool.updated", "controllers@kpool.internal", "civo-nodepool-controller: Ready=True", "c-gone", "pool 0b1f4c2e-0000-4000-8000-000000000009", "2026-11-26T11:55:00Z", "spec.autoscaling.enabled false -> true"}, []string{"c-aks", "nodepool.updated"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := render(func(w io.Writer) { tt.table(w, false) })
			for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
				if n := utf8.RuneCountInString(line); n > 80 {
					t.Errorf("a line of %d columns:\n%s", n, out)
				}
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("no %q in:\n%s", w, out)
				}
			}
			for _, w := range tt.notDefault {
				if strings.Contains(out, w) {
					t.Errorf("%q in the default table (wide only):\n%s", w, out)
				}
			}
			wide := render(func(w io.Writer) { tt.table(w, true) })
			for _, w := range tt.wantWide {
				if !strings.Contains(wide, w) {
					t.Errorf("no %q in -o wide:\n%s", w, wide)
				}
			}
		})
	}
}

// render runs table through the tab-aligned writer of print.
func render(table func(io.Writer)) string {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 8, 3, ' ', 0)
	table(tw)
	_ = tw.Flush()
	return b.String()
}

// TestNodesColumn: NODES is the Ready nodes over the count asked (the
// autoscaling bounds when no count is), "-" ready until the controller
// has counted.
func TestNodesColumn(t *testing.T) {
	t.Parallel()
	n := func(i int) *int { return &i }
	tests := []struct {
		name string
		p    kpool.NodePool
		want string
	}{
		{"counted", kpool.NodePool{Spec: kpool.NodePoolSpec{NodeCount: n(3)}, Status: kpool.NodePoolStatus{Nodes: &kpool.NodeCounts{Ready: 2, Total: 3}}}, "2/3"},
		{"not yet counted", kpool.NodePool{Spec: kpool.NodePoolSpec{NodeCount: n(3)}}, "-/3"},
		{"autoscaling with a count", kpool.NodePool{Spec: kpool.NodePoolSpec{NodeCount: n(4), Autoscaling: &kpool.Autoscaling{Enabled: true, MinNodes: n(2), MaxNodes: n(9)}}}, "-/4"},
		{"autoscaling, no count", kpool.NodePool{Spec: kpool.NodePoolSpec{Autoscaling: &kpool.Autoscaling{Enabled: true, MinNodes: n(2), MaxNodes: n(9)}}}, "-/2-9"},
	}
	for _, tt := range tests {
		if got := nodesColumn(&tt.p); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestReadmePoolTable: README's example of the pool table (Output) is what
// poolTable prints for those pools.
func TestReadmePoolTable(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	const intro = "**Output.** A table by default"
	_, after, ok := strings.Cut(string(b), intro)
	_, block, ok2 := strings.Cut(after, "```\n")
	block, _, ok3 := strings.Cut(block, "```\n")
	if !ok || !ok2 || !ok3 {
		t.Fatalf("README has no example table after %q", intro)
	}
	want := render(func(w io.Writer) { poolTable(w, realisticPools()[:2], knownNames(), false, tablesNow) })
	if block != want {
		t.Errorf("README's example:\n%s\npoolTable prints:\n%s", block, want)
	}
}

// TestNodeTableNames: cluster nodes' POOL is the kpool name of the node's
// pool, or the provider's name of a pool kpool does not have; the default
// table fits 80 columns with a cloud's long node names.
func TestNodeTableNames(t *testing.T) {
	t.Parallel()
	at := tablesNow.Add(-time.Hour)
	ns := []kpool.Node{
		{Name: "gke-demo-gke-default-pool-35838afb-tnb9", Pool: "default-pool", Zone: "1", Version: "v1.30.5-gke.1014001", Ready: true, CreatedAt: at},
		{Name: "aks-webfrontend-77341199-vmss000000", Pool: "webfrontend", Zone: "2", Version: "v1.30.4", Ready: true, CreatedAt: at},
	}
	out := render(func(w io.Writer) {
		nodeTable(w, ns, map[string]string{"webfrontend": "web-frontend"}, false, tablesNow)
	})
	want := `NAME                                      POOL           STATUS   ZONE   AGE
gke-demo-gke-default-pool-35838afb-tnb9   default-pool   Ready    1      60m
aks-webfrontend-77341199-vmss000000       web-frontend   Ready    2      60m
`
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}

// TestShownNames: one cluster list per command; a cluster made after it
// is asked by its ID once; an ID the caller cannot see is shown as it is,
// as is every ID of a nil cache.
func TestShownNames(t *testing.T) {
	t.Parallel()
	srv := newServer(t)
	a := createCluster(t, srv, "first", "gcp")
	p := createPool(t, srv, "web", a, "--machine-type", "e2-small", "--count", "1")
	c := api.NewClient(srv, testUser)
	s := &shown{ctx: context.Background(), client: c, pools: map[string]string{}}
	if got := s.cluster(a); got != "first" {
		t.Errorf("cluster %s: %q", a, got)
	}
	b := createCluster(t, srv, "later", "gcp")
	const unseen = "0b1f4c2e-0000-4000-8000-00000000abcd"
	for id, want := range map[string]string{b: "later", unseen: unseen, a: "first"} {
		if got := s.cluster(id); got != want {
			t.Errorf("cluster %s: %q, want %q", id, got, want)
		}
	}
	if got := s.pool(p.ID); got != "web" {
		t.Errorf("pool %s: %q", p.ID, got)
	}
	if got := s.pool(unseen); got != unseen {
		t.Errorf("an unseen pool: %q", got)
	}
	var none *shown
	if none.cluster(a) != a || none.pool(p.ID) != p.ID {
		t.Error("a nil cache does not show IDs as they are")
	}
}

// TestReporter: a controller's report shows as by that controller, its
// conditions summed up as the detail (statusSummary); other events keep
// their actor and detail.
func TestReporter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		typ, actor, detail string
		who, what          string
	}{
		{"nodepool.status", "controllers@kpool.internal", "gke-nodepool-controller: Ready=True", "gke-nodepool-controller", "Ready"},
		{"cluster.status", "ctl@example.com", "aks-nodepool-controller: Reachable=False (NoCredential)", "aks-nodepool-controller", "Reachable=False (NoCredential)"},
		{"nodepool.status", "controllers@kpool.internal", "1 unmarked pools: x", "controllers@kpool.internal", "1 unmarked pools: x"},
		{"nodepool.updated", "alice@example.com", "spec.nodeCount: 3 -> 4", "alice@example.com", "spec.nodeCount: 3 -> 4"},
		{"nodepool.status", "bob@example.com", "my controller: Ready=True", "bob@example.com", "my controller: Ready=True"},
	}
	for _, tt := range tests {
		who, what := reporter(kpool.Event{Type: tt.typ, Actor: tt.actor, Detail: tt.detail})
		if who != tt.who || what != tt.what {
			t.Errorf("%s %q %q: %q %q, want %q %q", tt.typ, tt.actor, tt.detail, who, what, tt.who, tt.what)
		}
	}
}
