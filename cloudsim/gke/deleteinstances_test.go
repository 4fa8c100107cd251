package gke_test

import (
	"errors"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"
	compute "google.golang.org/api/compute/v1"
	container "google.golang.org/api/container/v1"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
)

// migEnv is a kubeEnv with a pool "web" of 2 nodes a zone in zones a, b
// and c, and the Compute Engine client.
type migEnv struct {
	*kubeEnv
	compute *compute.Service
	groups  map[string]string // the pool's group by zone
}

func newMigEnv(t *testing.T) *migEnv {
	e := &migEnv{kubeEnv: newKubeEnv(t), groups: map[string]string{}}
	parent := strings.TrimPrefix(base, "/v1/")
	e.done(e.svc.Projects.Locations.Clusters.NodePools.Create(parent, &container.CreateNodePoolRequest{NodePool: &container.NodePool{Name: "web", InitialNodeCount: 2}}).Do())
	hc := &http.Client{Transport: &oauth2.Transport{Source: oauth2.StaticTokenSource(&oauth2.Token{AccessToken: googleToken}), Base: e.srv.Client().Transport}}
	var err error
	if e.compute, err = compute.NewService(ctx, option.WithHTTPClient(hc), option.WithEndpoint(e.srv.URL+"/compute/v1/")); err != nil {
		t.Fatal(err)
	}
	np, err := e.svc.Projects.Locations.Clusters.NodePools.Get(parent + "/nodePools/web").Do()
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range np.InstanceGroupUrls {
		seg := strings.Split(u, "/")
		e.groups[seg[len(seg)-3]] = seg[len(seg)-1]
	}
	return e
}

// byZone is the pool's nodes by zone.
func (e *migEnv) byZone() map[string][]string {
	out := map[string][]string{}
	for _, n := range e.nodes("web") {
		z := n.Labels["topology.kubernetes.io/zone"]
		out[z] = append(out[z], n.Name)
	}
	return out
}

// sizes is each zone's group's targetSize and ready (no action) count.
func (e *migEnv) sizes() (target, none map[string]int) {
	e.t.Helper()
	target, none = map[string]int{}, map[string]int{}
	for z, g := range e.groups {
		m, err := e.compute.InstanceGroupManagers.Get(project, z, g).Do()
		if err != nil {
			e.t.Fatal(err)
		}
		target[z], none[z] = int(m.TargetSize), int(m.CurrentActions.None)
	}
	return target, none
}

func (e *migEnv) del(zone string, skip bool, instances ...string) (*compute.Operation, error) {
	return e.compute.InstanceGroupManagers.DeleteInstances(project, zone, e.groups[zone],
		&compute.InstanceGroupManagersDeleteInstancesRequest{Instances: instances, SkipInstancesOnValidationError: skip}).Do()
}

func status(err error) int {
	var ge *googleapi.Error
	if errors.As(err, &ge) {
		return ge.Code
	}
	return 0
}

// TestDeleteInstances: deleteInstances (Compute's reference) takes the
// named instances, by partial or full URL, out of the group and its
// targetSize down by as many, answered with a DONE zonal Operation that
// zoneOperations.get finds; the nodes leave the cluster's Kubernetes API,
// the others stay, and the pool's state shows the group's size.
func TestDeleteInstances(t *testing.T) {
	e := newMigEnv(t)
	before := e.byZone()
	a, b := "us-central1-a", "us-central1-b"
	gone := []string{before[a][0], before[a][1]}
	op, err := e.del(a, false, "zones/"+a+"/instances/"+gone[0], e.srv.URL+"/compute/v1/projects/"+project+"/zones/"+a+"/instances/"+gone[1])
	if err != nil {
		t.Fatal(err)
	}
	if op.Status != "DONE" || op.Kind != "compute#operation" || !strings.HasSuffix(op.Zone, "/zones/"+a) || !strings.HasSuffix(op.TargetLink, "/instanceGroupManagers/"+e.groups[a]) {
		t.Fatalf("operation %+v", op)
	}
	if got, err := e.compute.ZoneOperations.Get(project, a, op.Name).Do(); err != nil || got.Name != op.Name || got.Status != "DONE" {
		t.Fatalf("zoneOperations.get: %v, %v", got, err)
	}
	after := e.byZone()
	if len(after[a]) != 0 || !slices.Equal(after[b], before[b]) || len(after["us-central1-c"]) != 2 {
		t.Fatalf("nodes by zone after deleting 2 in %s: %v (before %v)", a, after, before)
	}
	target, none := e.sizes()
	if want := map[string]int{a: 0, b: 2, "us-central1-c": 2}; !maps.Equal(target, want) || !maps.Equal(none, want) {
		t.Fatalf("targetSize %v, ready %v; want %v", target, none, want)
	}
	st, _ := e.sim.Pool(project, region, name, "web")
	if st.Nodes != 4 || st.Groups[a] != 0 || st.Groups[b] != 2 || st.PerZone != 2 {
		t.Fatalf("pool state: %d nodes, groups %v, perZone %d", st.Nodes, st.Groups, st.PerZone)
	}
	// Time passes: the group stays at its new size (nothing remakes them).
	e.clock.Advance(time.Hour)
	if got := e.byZone(); !maps.EqualFunc(got, after, slices.Equal) {
		t.Fatalf("an hour later: %v, want %v", got, after)
	}
	// setSize sets every zone's group to its count again.
	e.done(e.svc.Projects.Locations.Clusters.NodePools.SetSize(strings.TrimPrefix(base, "/v1/")+"/nodePools/web", &container.SetNodePoolSizeRequest{NodeCount: 1}).Do())
	if target, none := e.sizes(); !maps.Equal(target, map[string]int{a: 1, b: 1, "us-central1-c": 1}) || !maps.Equal(none, target) {
		t.Fatalf("setSize 1: targetSize %v, ready %v", target, none)
	}
	for z, l := range e.byZone() {
		if len(l) != 1 {
			t.Fatalf("setSize 1: zone %s has nodes %v", z, l)
		}
	}
}

// TestDeleteInstancesValidation: an instance that is not the group's
// fails the request (400, nothing deleted) unless
// skipInstancesOnValidationError, which skips it and deletes the rest; a
// malformed URL, another zone's instance and an empty list always fail; a
// group that does not exist is 404; the pool's nodes are all Ready.
func TestDeleteInstancesValidation(t *testing.T) {
	e := newMigEnv(t)
	before := e.byZone()
	a, b := "us-central1-a", "us-central1-b"
	for _, tc := range []struct {
		skip bool
		refs []string
	}{
		{false, []string{"zones/" + a + "/instances/" + before[a][0], "zones/" + a + "/instances/gke-nope-1234"}},
		{false, []string{"zones/" + a + "/instances/" + before[a][0], "zones/" + a + "/instances/" + before[a][0]}},
		{true, []string{"zones/" + b + "/instances/" + before[b][0]}},
		{true, []string{"zones/" + a + "/vms/" + before[a][0]}},
		{true, []string{"projects/other/zones/" + a + "/instances/" + before[a][0]}},
		{true, nil},
	} {
		if _, err := e.del(a, tc.skip, tc.refs...); status(err) != http.StatusBadRequest {
			t.Fatalf("%v (skip %v): %v, want 400", tc.refs, tc.skip, err)
		}
	}
	if got := e.byZone(); !maps.EqualFunc(got, before, slices.Equal) {
		t.Fatalf("refused requests deleted nodes: %v, before %v", got, before)
	}
	if _, err := e.compute.InstanceGroupManagers.DeleteInstances(project, a, "gke-nope-grp", &compute.InstanceGroupManagersDeleteInstancesRequest{Instances: []string{"zones/" + a + "/instances/x"}}).Do(); status(err) != http.StatusNotFound {
		t.Fatalf("another group: %v, want 404", err)
	}
	if _, err := e.del(a, true, "zones/"+a+"/instances/gke-nope-1234", "zones/"+a+"/instances/"+before[a][1]); err != nil {
		t.Fatal(err)
	}
	after := e.byZone()
	if !slices.Equal(after[a], before[a][:1]) || !slices.Equal(after[b], before[b]) {
		t.Fatalf("skip: %v, before %v", after, before)
	}
	for _, n := range e.nodes("web") {
		if !ready(n) {
			t.Fatalf("node %s NotReady", n.Name)
		}
	}
}

// TestDeleteInstancesWhileBusy: while GKE's operation holds the pool, its
// groups refuse deleteInstances, and nothing goes.
func TestDeleteInstancesWhileBusy(t *testing.T) {
	e := newMigEnv(t)
	before := e.byZone()
	a := "us-central1-a"
	if _, err := e.svc.Projects.Locations.Clusters.NodePools.SetSize(strings.TrimPrefix(base, "/v1/")+"/nodePools/web", &container.SetNodePoolSizeRequest{NodeCount: 3}).Do(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.del(a, true, "zones/"+a+"/instances/"+before[a][0]); status(err) != http.StatusBadRequest {
		t.Fatalf("during setSize: %v, want 400", err)
	}
	e.clock.Advance(time.Hour)
	if got := e.byZone(); len(got[a]) != 3 || !slices.Contains(got[a], before[a][0]) {
		t.Fatalf("after setSize 3: %v", got)
	}
}
