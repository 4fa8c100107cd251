package oke_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/oracle/oci-go-sdk/v65/common"
	ce "github.com/oracle/oci-go-sdk/v65/containerengine"

	"github.com/kpool/kpool/cloudsim/oke"
	"github.com/kpool/kpool/cloudsim/sim"
)

func nodesConfig(v string) []ce.AddonConfiguration {
	return []ce.AddonConfiguration{{Key: common.String("nodes"), Value: common.String(v)}, {Key: common.String("numOfReplicas"), Value: common.String("1")}}
}

// TestAddons: the Cluster Autoscaler add-on through Oracle's SDK: installed
// once, changed under its etag while no work request holds it, refused
// with OCI's codes otherwise, disabled; a configuration it would not take
// is refused at once.
func TestAddons(t *testing.T) {
	e := newEnv(t, 0)
	web := e.create(t, details("web", 2, "Uocm:PHX-AD-1"))
	cluster, name := common.String(clusterID), common.String(oke.AutoscalerAddon)

	_, err := e.client.GetAddon(ctx, ce.GetAddonRequest{ClusterId: cluster, AddonName: name})
	serviceError(t, err, http.StatusNotFound, "NotAuthorizedOrNotFound")
	for _, bad := range []string{"2:6", "6:2:" + web, "a:6:" + web, "2:6:ocid1.subnet.oc1..x"} {
		_, err := e.client.InstallAddon(ctx, ce.InstallAddonRequest{ClusterId: cluster, InstallAddonDetails: ce.InstallAddonDetails{AddonName: name, Configurations: nodesConfig(bad)}})
		serviceError(t, err, http.StatusBadRequest, "InvalidParameter")
	}
	_, err = e.client.InstallAddon(ctx, ce.InstallAddonRequest{ClusterId: cluster, InstallAddonDetails: ce.InstallAddonDetails{AddonName: common.String("Banana")}})
	serviceError(t, err, http.StatusBadRequest, "InvalidParameter")

	in, err := e.client.InstallAddon(ctx, ce.InstallAddonRequest{ClusterId: cluster, InstallAddonDetails: ce.InstallAddonDetails{AddonName: name, Configurations: nodesConfig("2:6:" + web)}})
	if err != nil || in.OpcWorkRequestId == nil {
		t.Fatalf("install: %+v %v", in, err)
	}
	got, err := e.client.GetAddon(ctx, ce.GetAddonRequest{ClusterId: cluster, AddonName: name})
	if err != nil || got.LifecycleState != ce.AddonLifecycleStateCreating || got.Etag == nil {
		t.Fatalf("get while installing: %+v %v", got, err)
	}
	_, err = e.client.UpdateAddon(ctx, ce.UpdateAddonRequest{ClusterId: cluster, AddonName: name, IfMatch: got.Etag, UpdateAddonDetails: ce.UpdateAddonDetails{Configurations: nodesConfig("1:3:" + web)}})
	serviceError(t, err, http.StatusConflict, "IncorrectState")
	_, err = e.client.InstallAddon(ctx, ce.InstallAddonRequest{ClusterId: cluster, InstallAddonDetails: ce.InstallAddonDetails{AddonName: name}})
	serviceError(t, err, http.StatusConflict, "IncorrectState")

	e.clock.Advance(time.Minute)
	got, err = e.client.GetAddon(ctx, ce.GetAddonRequest{ClusterId: cluster, AddonName: name})
	if err != nil || got.LifecycleState != ce.AddonLifecycleStateActive {
		t.Fatalf("get once installed: %+v %v", got, err)
	}
	_, err = e.client.InstallAddon(ctx, ce.InstallAddonRequest{ClusterId: cluster, InstallAddonDetails: ce.InstallAddonDetails{AddonName: name}})
	serviceError(t, err, http.StatusConflict, "NotAuthorizedOrResourceAlreadyExists")
	_, err = e.client.UpdateAddon(ctx, ce.UpdateAddonRequest{ClusterId: cluster, AddonName: name, IfMatch: common.String("stale"), UpdateAddonDetails: ce.UpdateAddonDetails{Configurations: nodesConfig("1:3:" + web)}})
	serviceError(t, err, http.StatusPreconditionFailed, "NoEtagMatch")
	up, err := e.client.UpdateAddon(ctx, ce.UpdateAddonRequest{ClusterId: cluster, AddonName: name, IfMatch: got.Etag, UpdateAddonDetails: ce.UpdateAddonDetails{Configurations: nodesConfig("1:3:" + web)}})
	if err != nil {
		t.Fatal(err)
	}
	wr, err := e.client.GetWorkRequest(ctx, ce.GetWorkRequestRequest{WorkRequestId: up.OpcWorkRequestId})
	if err != nil || wr.OperationType != ce.WorkRequestOperationTypeUpdateAddon || *wr.Resources[0].Identifier != clusterID {
		t.Fatalf("update's work request: %+v %v", wr.WorkRequest, err)
	}
	if nodes, ok := e.emu.AutoscalerNodes(clusterID); !ok || nodes != "1:3:"+web {
		t.Fatalf("nodes %q %v", nodes, ok)
	}
	list, err := e.client.ListAddons(ctx, ce.ListAddonsRequest{ClusterId: cluster})
	if err != nil || len(list.Items) != 1 || *list.Items[0].Name != oke.AutoscalerAddon {
		t.Fatalf("list: %+v %v", list.Items, err)
	}

	e.clock.Advance(time.Minute)
	_, err = e.client.DisableAddon(ctx, ce.DisableAddonRequest{ClusterId: cluster, AddonName: name, IsRemoveExistingAddOn: common.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Minute)
	if _, ok := e.emu.AutoscalerNodes(clusterID); ok {
		t.Fatal("the add-on is still installed after its disable")
	}
}

// TestAutoscalerDemand: the emulated Cluster Autoscaler moves a pool it
// has an entry for within the entry's bounds, and no other pool.
func TestAutoscalerDemand(t *testing.T) {
	e := newEnv(t, 0)
	web := e.create(t, details("web", 2, "Uocm:PHX-AD-1"))
	e.create(t, details("batch", 1, "Uocm:PHX-AD-1"))
	e.clock.Advance(time.Hour)
	if _, err := e.emu.SetDemand(clusterID, "web", 5); err == nil {
		t.Fatal("demand moved a pool with no add-on")
	}
	_, err := e.client.InstallAddon(ctx, ce.InstallAddonRequest{ClusterId: common.String(clusterID), InstallAddonDetails: ce.InstallAddonDetails{
		AddonName: common.String(oke.AutoscalerAddon), Configurations: nodesConfig("2:4:" + web)}})
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Minute)
	for _, tc := range []struct{ demand, want int }{{3, 3}, {9, 4}, {0, 2}} {
		size, err := e.emu.SetDemand(clusterID, "web", tc.demand)
		st, _ := e.emu.PoolOf(clusterID, "web")
		if err != nil || size != tc.want || *st.NodeConfigDetails.Size != tc.want || len(st.Nodes) != tc.want {
			t.Fatalf("demand %d: size %d (pool %d, %d nodes), %v; want %d", tc.demand, size, *st.NodeConfigDetails.Size, len(st.Nodes), err, tc.want)
		}
	}
	if _, err := e.emu.SetDemand(clusterID, "batch", 3); err == nil {
		t.Fatal("demand moved a pool the add-on has no entry for")
	}
	// One host left in AD-1: of 2 more nodes one launches; the pool
	// NEEDS_ATTENTION until the demand drops (capacity.go).
	ad1 := sim.Offering{Zone: "Uocm:PHX-AD-1", MachineType: "VM.Standard.E4.Flex"}
	e.emu.SetCapacity(ad1, 1)
	if _, err := e.emu.SetDemand(clusterID, "web", 4); err != nil {
		t.Fatal(err)
	}
	np := e.get(t, web)
	if a, f := nodeCounts(t, np); np.LifecycleState != ce.NodePoolLifecycleStateNeedsAttention || a != 3 || f != 1 {
		t.Fatalf("short demand: %s, %d active, %d failed", np.LifecycleState, a, f)
	}
	if _, err := e.emu.SetDemand(clusterID, "web", 2); err != nil {
		t.Fatal(err)
	}
	np = e.get(t, web)
	if a, f := nodeCounts(t, np); np.LifecycleState != ce.NodePoolLifecycleStateActive || a != 2 || f != 0 || e.available(t, ad1) != 1 {
		t.Fatalf("demand down to 2: %s, %d active, %d failed, %d available", np.LifecycleState, a, f, e.available(t, ad1))
	}
}
