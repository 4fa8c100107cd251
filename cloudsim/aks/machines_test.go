package aks_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"k8s.io/utils/ptr"

	"github.com/kpool/kpool/cloudsim/aks"
)

// machines lists a pool's machines with the SDK's MachinesClient: their
// names and, by name, their resourceId.
func (e *env) machines(pool string) ([]string, map[string]string) {
	e.t.Helper()
	mc, err := armcontainerservice.NewMachinesClient(sub, staticToken(token), clientOptions(e.ep.URL, e.http))
	if err != nil {
		e.t.Fatal(err)
	}
	var names []string
	ids := map[string]string{}
	for pager := mc.NewListPager(group, cluster, pool, nil); pager.More(); {
		page, err := pager.NextPage(ctx)
		if err != nil {
			e.t.Fatal(err)
		}
		for _, m := range page.Value {
			names = append(names, ptr.Deref(m.Name, ""))
			ids[ptr.Deref(m.Name, "")] = ptr.Deref(m.Properties.ResourceID, "")
		}
	}
	return names, ids
}

// The Machines API lists a pool's machines by their nodes' names, each
// with its scale set instance as resourceId, which is the node's
// spec.providerID after azure:// (MachineList.json; cloud-provider-azure's
// provider ids); Get answers one, and 404 for a name not the pool's.
func TestMachinesList(t *testing.T) {
	e := newEnv(t, aks.Options{})
	e.create("workers", basic(3))
	e.settle()
	names, ids := e.machines("workers")
	if want := e.sim.Machines(sub, group, cluster, "workers"); len(names) != 3 || !slices.Equal(names, want) {
		t.Fatalf("machines %v, want %v", names, want)
	}
	kid := e.sim.KubeID(sub, group, cluster)
	for _, n := range names {
		node, ok := e.sim.Kube().Node(kid, n)
		if !ok {
			t.Fatalf("machine %s has no node", n)
		}
		if pid := node.Spec.ProviderID; !strings.EqualFold(pid, "azure://"+ids[n]) ||
			!strings.Contains(pid, "/providers/Microsoft.Compute/virtualMachineScaleSets/aks-workers-") {
			t.Fatalf("node %s providerID %q, machine resourceId %q", n, pid, ids[n])
		}
	}
	mc, err := armcontainerservice.NewMachinesClient(sub, staticToken(token), clientOptions(e.ep.URL, e.http))
	if err != nil {
		t.Fatal(err)
	}
	got, err := mc.Get(ctx, group, cluster, "workers", names[1], nil)
	if err != nil || ptr.Deref(got.Name, "") != names[1] || ptr.Deref(got.Type, "") != "Microsoft.ContainerService/managedClusters/agentPools/machines" {
		t.Fatalf("get %s: %+v, %v", names[1], got.Machine, err)
	}
	_, err = mc.Get(ctx, group, cluster, "workers", "aks-workers-1-vmss000009", nil)
	wantError(t, err, http.StatusNotFound, "ResourceNotFound")
}

// deleteMachines: a name that is not one of the pool's machines (another
// pool's, or one named twice) is refused with 400 InvalidParameter on
// machineNames and nothing is removed; the named machines go, count drops
// by as many, their nodes leave the Kubernetes API and the others keep
// their names; another deleteMachines while it runs is 409.
func TestDeleteMachinesRules(t *testing.T) {
	e := newEnv(t, aks.Options{})
	e.create("workers", basic(3))
	e.create("other", basic(1))
	e.settle()
	all, _ := e.machines("workers")
	foreign, _ := e.machines("other")
	for _, bad := range [][]string{{foreign[0]}, {all[0], all[0]}, {all[0], "aks-workers-1-vmss000000"}} {
		_, err := e.pools.BeginDeleteMachines(ctx, group, cluster, "workers",
			armcontainerservice.AgentPoolDeleteMachinesParameter{MachineNames: ptrs(bad)}, nil)
		re := wantError(t, err, http.StatusBadRequest, "InvalidParameter")
		if b, _ := runtime.Payload(re.RawResponse); !strings.Contains(string(b), `"target":"machineNames"`) {
			t.Fatalf("%v: the error names no target machineNames: %s", bad, b)
		}
	}
	if st := e.state("workers"); ptr.Deref(st.Properties.Count, 0) != 3 || st.Operation != "" {
		t.Fatalf("a refused deleteMachines changed the pool: count %d, %q", ptr.Deref(st.Properties.Count, 0), st.Operation)
	}
	if _, err := e.pools.BeginDeleteMachines(ctx, group, cluster, "workers",
		armcontainerservice.AgentPoolDeleteMachinesParameter{MachineNames: ptrs([]string{all[1]})}, nil); err != nil {
		t.Fatal(err)
	}
	_, err := e.pools.BeginDeleteMachines(ctx, group, cluster, "workers",
		armcontainerservice.AgentPoolDeleteMachinesParameter{MachineNames: ptrs([]string{all[0]})}, nil)
	wantError(t, err, http.StatusConflict, "OperationNotAllowed")
	if st := e.state("workers"); ptr.Deref(st.Properties.Count, 0) != 2 {
		t.Fatalf("count while deleting: %d, want 2", ptr.Deref(st.Properties.Count, 0))
	}
	e.settle()
	left, _ := e.machines("workers") // an ARM request: the nodes are synced
	if want := []string{all[0], all[2]}; !slices.Equal(left, want) {
		t.Fatalf("machines after deleting %s: %v, want %v", all[1], left, want)
	}
	kid := e.sim.KubeID(sub, group, cluster)
	if _, ok := e.sim.Kube().Node(kid, all[1]); ok {
		t.Fatalf("node %s is still in the Kubernetes API", all[1])
	}
	for _, n := range left {
		if _, ok := e.sim.Kube().Node(kid, n); !ok {
			t.Fatalf("node %s left the Kubernetes API", n)
		}
	}
	if st := e.state("workers"); ptr.Deref(st.Properties.Count, 0) != 2 || st.ReadyNodes != 2 {
		t.Fatalf("after deleting 1 of 3: count %d, %d ready", ptr.Deref(st.Properties.Count, 0), st.ReadyNodes)
	}
}

func ptrs(ss []string) []*string {
	out := make([]*string, 0, len(ss))
	for _, s := range ss {
		out = append(out, ptr.To(s))
	}
	return out
}
